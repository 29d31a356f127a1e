"""How a plan's targeting reads: names next to codes, one line per field, quota or change.

Every renderer (text, markdown, json) describes a resource through `Describer`, which takes the
names from the plan's `labels` table (see reconcile/labels.py) for the survey's locale:

    qualifications[Employment Status].answers: Full-time (111), Part-time (112) -> Full-time (111)
    quotas[male]: 100 completes; Gender: Male (111); Age: 18-34 years; title "Men"

Without a name for a code (planned --offline, or a locale without a catalogue) the code stands
alone: `qualifications[215].condition_codes: 111, 112 -> 111`.
"""

from __future__ import annotations

import re
from collections.abc import Callable
from dataclasses import dataclass
from functools import partial
from typing import Any

from surveyctl.reconcile.labels import path_attribute, resource_locale
from surveyctl.reconcile.plan import FieldChange, Plan, ResourceChange
from surveyctl.render.values import printable, show

# Units of range_sets (public facts): years and months of age, US dollars of income.
UNITS = {311: "years", 312: "months", 321: "USD"}
# Beyond this many answers (or a group's surveys) on both sides, a change lists what was added
# and removed instead.
LONG_LIST = 20

_ITEM = re.compile(r"(^qualifications|\.criteria)\[(\d+)\]")


@dataclass(frozen=True)
class Line:
    """One line of a resource's plan: a symbol (`+ - ~ !` or space), a depth, and its text.
    The text is made printable here, where every renderer's lines are made: a quota id or a
    catalogue's answer is shown as written, and one with an escape or a line break would
    act on the terminal or break the line (and, in a comment, the diff block)."""

    symbol: str
    depth: int
    text: str

    def __post_init__(self) -> None:
        object.__setattr__(self, "text", printable(self.text))


class Describer:
    """Describes the codes of one survey in the names of its locale's catalogue."""

    def __init__(self, plan: Plan, resource: ResourceChange):
        locale = resource_locale(resource)
        self.names: dict[str, dict] = plan.labels.get(locale or "", {})
        self.surveys = plan.survey_names

    def attribute(self, code: Any) -> str | None:
        entry = self.names.get(str(code))
        return entry.get("name") if entry else None

    def answer(self, attribute: Any, code: Any) -> str:
        """`Male (111)`, or `111` when the catalogue did not name it."""
        entry = self.names.get(str(attribute)) or {}
        text = (entry.get("answers") or {}).get(str(code))
        return f"{text} ({code})" if text else str(code)

    def answers(self, attribute: Any, codes: list) -> str:
        return ", ".join(self.answer(attribute, code) for code in codes) or "(none)"

    def survey(self, ps_survey_id: Any) -> str:
        """`brand-tracker-gb (10001)`, or `10001` when no managed survey has that id."""
        name = self.surveys.get(str(ps_survey_id))
        return f"{name} ({ps_survey_id})" if name else str(ps_survey_id)

    def members(self, ids: list) -> str:
        """An exclusion group's surveys by name: `brand-tracker-gb (10001), ...`."""
        return ", ".join(self.survey(value) for value in ids) or "(none)"

    def path(self, path: str) -> str:
        """`qualifications[215].condition_codes` -> `qualifications[Employment Status].answers`
        when the catalogue names 215; unchanged otherwise."""
        attribute = path_attribute(path)
        if attribute is None or self.attribute(attribute) is None:
            return path
        name = self.attribute(attribute)
        renamed = _ITEM.sub(
            lambda m: f"{m.group(1)}[{name}]" if m.group(2) == attribute else m.group(0), path
        )
        if renamed.endswith(".condition_codes"):
            renamed = renamed[: -len("condition_codes")] + "answers"
        return renamed

    def value(self, path: str, value: Any) -> str:
        """A change's old or new value, in words where the path says what it is."""
        if value is None:
            return show(value)
        if path == "surveys_in_group" and isinstance(value, list):
            return self.members(value)
        attribute = path_attribute(path)
        if attribute is not None and isinstance(value, list):
            if path.endswith(".condition_codes"):
                return self.answers(attribute, value)
            if path.endswith(".range_sets"):
                return ranges(value)
        if isinstance(value, dict):
            if attribute is not None and _ITEM.search(path) and path.endswith("]"):
                return self.targeting(value, named=False)
            if path.startswith("quotas[") and path.count("[") == 1 and path.endswith("]"):
                return self.quota(value)
        return show(value, limit=None)

    def targeting(self, item: dict, named: bool = True) -> str:
        """A qualification or criterion: `Gender: Male (111), Female (112)`, `Age: 18-99 years`
        (without the attribute's name when `named` is False)."""
        code = item.get("qualification_code")
        parts = []
        if item.get("condition_codes") is not None:
            parts.append(self.answers(code, list(item["condition_codes"])))
        if item.get("range_sets") is not None:
            parts.append(ranges(item["range_sets"]))
        rest = {
            k: v
            for k, v in item.items()
            if k not in ("qualification_code", "condition_codes", "range_sets")
        }
        parts += [f"{key} {show(value, limit=None)}" for key, value in sorted(rest.items())]
        text = "; ".join(parts) or "(any answer)"
        if not named:
            return text
        return f"{self.attribute(code) or code}: {text}"

    def quota(self, quota: dict) -> str:
        """`100 completes; Gender: Male (111); title "Men"` (the id is in the path)."""
        parts = [f"{quota.get('required_count')} completes"]
        parts += [self.targeting(c) for c in quota.get("criteria") or [] if isinstance(c, dict)]
        if quota.get("quota_title"):
            parts.append(f"title {show(quota['quota_title'])}")
        rest = {
            k: v
            for k, v in quota.items()
            if k not in ("buyer_quota_id", "quota_title", "required_count", "criteria")
            and v not in (None, "")
        }
        parts += [f"{key} {show(value, limit=None)}" for key, value in sorted(rest.items())]
        return "; ".join(parts)

    def change(self, change: FieldChange) -> tuple[str, str, str]:
        """The change as (path, old, new) in words; a long list of answers or of a group's
        surveys as what was added and removed."""
        path = self.path(change.path)
        old, new = change.old, change.new
        attribute = path_attribute(change.path)
        if isinstance(old, list) and isinstance(new, list) and len(old) + len(new) > LONG_LIST:
            if attribute is not None and change.path.endswith(".condition_codes"):
                return (
                    path,
                    *_added_removed(old, new, "answers", partial(self.answers, attribute)),
                )
            if change.path == "surveys_in_group":
                return (path, *_added_removed(old, new, "surveys", self.members))
        return path, self.value(change.path, old), self.value(change.path, new)

    def create_lines(self, body: dict) -> list[Line]:
        """Every field of a create: qualifications one line each, quotas one line each."""
        lines: list[Line] = []
        for key, value in sorted(body.items()):
            if value in (None, [], {}):
                continue  # nothing to show for a field left empty
            if key == "qualifications" and isinstance(value, list):
                for item in value:
                    code = item.get("qualification_code") if isinstance(item, dict) else None
                    field = self._qualification_field(item)
                    path = self.path(f"qualifications[{code}]{field}")
                    lines.append(Line("+", 1, f"{path}: {self.targeting(item, named=False)}"))
            elif key == "quotas" and isinstance(value, list):
                for quota in value:
                    if isinstance(quota, dict):
                        path = f"quotas[{quota.get('buyer_quota_id')}]"
                        lines.append(Line("+", 1, f"{path}: {self.quota(quota)}"))
            else:
                lines.append(Line("+", 1, f"{key}: {show(value, limit=None)}"))
        return lines

    @staticmethod
    def _qualification_field(item: Any) -> str:
        if not isinstance(item, dict):
            return ""
        keys = set(item) - {"qualification_code"}
        if keys == {"condition_codes"}:
            return ".condition_codes"
        if keys == {"range_sets"}:
            return ".range_sets"
        return ""


def _added_removed(
    old: list, new: list, noun: str, describe: Callable[[list], str]
) -> tuple[str, str]:
    """(`12 answers`, `11 answers (added: ...; removed: ...)`) for a long list's change."""
    added = [item for item in new if item not in old]
    removed = [item for item in old if item not in new]
    return (
        f"{len(old)} {noun}",
        f"{len(new)} {noun} (added: {describe(added)}; removed: {describe(removed)})",
    )


def ranges(value: list) -> str:
    """`18-34 years, 55-99 years` for range_sets."""
    shown = []
    for item in value:
        if not isinstance(item, dict):
            shown.append(show(item))
            continue
        unit = item.get("units")
        name = UNITS.get(unit, f"(units {unit})" if unit is not None else "")
        shown.append(f"{_number(item.get('from'))}-{_number(item.get('to'))} {name}".rstrip())
    return ", ".join(shown) or "(none)"


def _number(value: Any) -> str:
    if isinstance(value, float) and value.is_integer():
        return str(int(value))
    return str(value)
