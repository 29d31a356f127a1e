"""Merging a program's template, market and wave, and putting variables into its strings.

Mappings merge key by key (recursively); lists and plain values replace. Placeholders `{name}`
take the variables; `{{` and `}}` write a brace. What does not change is shared between
members, not copied. The text variables make is spent from the file's budget
(`surveyctl.manifests.budget`) before it is built: a variable used a hundred thousand times,
or a megabyte long, is one error, not a hundred gigabytes.
"""

from __future__ import annotations

import re
from typing import Any

from surveyctl.errors import Location
from surveyctl.manifests.budget import MAX_CHARACTERS, Budget
from surveyctl.manifests.diagnostics import Diagnostics
from surveyctl.manifests.load import MarkedDict, MarkedList

_PLACEHOLDER = re.compile(r"\{\{|\}\}|\{([A-Za-z_][A-Za-z0-9_]*)\}")


class OverBudget(Exception):
    """An expansion went over its file's budget; the error is reported already."""


def merge(base: MarkedDict, over: MarkedDict | None) -> MarkedDict:
    """`over` merged over `base`: mappings key by key, lists and values replaced."""
    if not over:
        return base
    out = like(base)
    out.update(base)
    out._marks = {**getattr(base, "_marks", {}), **getattr(over, "_marks", {})}
    for key, value in over.items():
        old = base.get(key)
        if isinstance(old, MarkedDict) and isinstance(value, MarkedDict):
            out[key] = merge(old, value)
        else:
            out[key] = value
    return out


# The texts of a quota generator that it reads as templates of its own (str.format_map).
GENERATOR_TEMPLATES = ("id", "title")


def substitute(
    value: Any,
    variables: dict[str, str],
    diagnostics: Diagnostics,
    where: Location,
    lenient: bool,
    budget: Budget,
    generator: bool = False,
    template: bool = False,
    owner: str = "",
) -> Any:
    """`value` with placeholders replaced; containers without any are returned as they are
    (shared between members), so expanding 360 members copies only what differs. `generator`:
    `value` is a quota generator's mapping; `template`: it is one of its templates; `owner`:
    the member being made, as an unknown variable's error names it."""
    if isinstance(value, str):
        if "{" not in value:
            return value
        return text_of(value, variables, diagnostics, where, lenient, budget, template, owner)
    if isinstance(value, MarkedDict):
        changed = {}
        for key, item in value.items():
            new = substitute(
                item,
                variables,
                diagnostics,
                value.where(key),
                lenient or key == "generate",
                budget,
                generator=key == "generate",
                template=generator and key in GENERATOR_TEMPLATES,
                owner=owner,
            )
            if new is not item:
                changed[key] = new
        if not changed:
            return value
        out = like(value)
        out.update(value)
        out.update(changed)
        return out
    if isinstance(value, MarkedList):
        items = [
            substitute(item, variables, diagnostics, value.where(i), lenient, budget, owner=owner)
            for i, item in enumerate(value)
        ]
        if all(new is old for new, old in zip(items, value, strict=True)):
            return value
        out_list = MarkedList(items)
        out_list._file, out_list._start = value._file, value._start
        out_list._marks = getattr(value, "_marks", [])
        return out_list
    return value


def text_of(
    text: str,
    variables: dict[str, str],
    diagnostics: Diagnostics,
    where: Location,
    lenient: bool,
    budget: Budget,
    template: bool = False,
    owner: str = "",
) -> str:
    """`text` with its placeholders replaced. Its length is known before it is made (a
    variable used many times, or a long one, multiplies what is written), and spent from the
    file's budget: over it, the error and OverBudget, before the text is built.

    `lenient`: names that are not variables stay (a quota generator's dimensions). `template`:
    the text is a generator's template, read once more by the generator: `{{` and `}}` stay,
    for the generator writes them as braces, and a variable's braces are doubled, so that its
    value is written as it is, never read again as a dimension. `owner` (`Survey
    'tracker[en_GB,w2]'`) starts an unknown variable's error: a variable that some waves or
    markets set and others do not is unknown only in the members the error names."""
    size = _expanded_size(text, variables, template)
    if not budget.spend_characters(size):
        diagnostics.error(
            f"The variables in {_shortened(text)} take the text of its file's program "
            f"members over {MAX_CHARACTERS:,} characters in all (this text alone is {size:,}); "
            "a variable repeated or too long?",
            where,
        )
        raise OverBudget

    # A brace left once the placeholders and escapes are taken out is a lone one: most likely
    # a placeholder cut short.
    if not lenient and any(brace in _PLACEHOLDER.sub("", text) for brace in "{}"):
        diagnostics.error(
            f"A lone brace in {_shortened(text)}: a variable is written {{name}}, and a brace "
            "itself {{ or }}",
            where,
        )

    def replace(match: re.Match) -> str:
        token, name = match[0], match[1]
        if name is None:
            return token if template else token[0]  # {{ -> {, }} -> }
        if name in variables:
            return _template_text(variables[name]) if template else variables[name]
        if not lenient:
            known = ", ".join(sorted(variables))
            unknown = f"nknown variable {{{name}}} in {_shortened(text)}; known: {known}"
            diagnostics.error(f"{owner}: u{unknown}" if owner else f"U{unknown}", where)
        return token

    return _PLACEHOLDER.sub(replace, text)


def _expanded_size(text: str, variables: dict[str, str], template: bool) -> int:
    """The length of `text` once its placeholders are replaced, without building it."""
    size = len(text)
    for match in _PLACEHOLDER.finditer(text):
        name = match[1]
        if name is None:
            size -= 0 if template else 1  # {{ -> {
        elif name in variables:
            value = variables[name]
            written = len(value) + (value.count("{") + value.count("}") if template else 0)
            size += written - len(match[0])
    return size


def _template_text(value: str) -> str:
    """`value` as a generator template writes it: its braces doubled."""
    return value.replace("{", "{{").replace("}", "}}")


def _shortened(text: str, limit: int = 60) -> str:
    """`text` quoted for a message, cut when long (a hostile one may be megabytes)."""
    return repr(text if len(text) <= limit else text[:limit] + "...")


def like(value: MarkedDict) -> MarkedDict:
    """An empty MarkedDict with the marks of `value`."""
    out = MarkedDict()
    out._file, out._start = value._file, value._start
    out._marks = dict(getattr(value, "_marks", {}))
    return out
