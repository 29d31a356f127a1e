"""Discovery: the account's surveys, which of them this environment manages, and adopting the
rest in one go.

`list_surveys` reads the service's survey list (every page) for the statuses asked and marks
each survey with the address under which this environment's state manages it. The list is
filtered by status here too, so the answer is right even where a service ignores the filter.

`adopt_unmanaged` imports every survey of those statuses that the state does not manage: each
gets a manifest in the output folder, named from its title by the name rule and made unique,
and is recorded in state on its own (one state write per survey, after its manifest is
written), so an interrupted run keeps what it adopted. It refuses while the state journal holds
an unresolved create: one of the unmanaged surveys may be the one that create made, and it
belongs under the name of the manifest that made it. For the same reason it takes no name of
the project's manifests, and leaves a survey that a manifest describes (by the identity rule,
while the state does not manage that manifest: after a lost state) to that manifest: a second
manifest of it would make the manifests invalid, or the next plan create it again.
"""

from __future__ import annotations

import re
import shlex
import unicodedata
from collections.abc import Callable, Iterable, Mapping
from dataclasses import dataclass, field
from pathlib import Path
from typing import Protocol

from surveyctl.errors import SurveyctlError
from surveyctl.numbers import as_number
from surveyctl.reconcile.choices import DEFAULT_PARALLELISM
from surveyctl.reconcile.identity import Rule, same_survey
from surveyctl.reconcile.importer import ImportRefused, save_adoption, survey_adoption
from surveyctl.reconcile.live import fetch_all
from surveyctl.resources import SURVEY, address, check_name, kind_of, name_of
from surveyctl.state import State, StateBackend, SurveyRecord
from surveyctl.statuses import survey_status_name

MAX_NAME = 63  # the name rule's longest name
# The fields of a listed survey in JSON and CSV, in this order.
ROW_FIELDS = (
    "ps_survey_id",
    "status",
    "status_name",
    "survey_title",
    "survey_localization",
    "completes_required",
    "offer_price",
    "managed_as",
)


class SurveySource(Protocol):
    """What discovery needs of the marketplace client."""

    def list_surveys(self, status: list[int] | None = None) -> list[dict]: ...

    def get_survey(self, survey_id: int) -> dict: ...


@dataclass(frozen=True)
class ListedSurvey:
    """One survey of the account, as the list shows it."""

    ps_survey_id: int
    status: int | None
    title: str
    localization: str | None
    completes_required: int | None
    offer_price: float | None
    managed_as: str | None  # its address in this environment's state, if managed

    @property
    def status_name(self) -> str:
        return survey_status_name(self.status)

    def row(self) -> dict:
        """The survey as a flat record of ROW_FIELDS (JSON and CSV)."""
        values = (
            self.ps_survey_id,
            self.status,
            self.status_name,
            self.title,
            self.localization,
            self.completes_required,
            self.offer_price,
            self.managed_as,
        )
        return dict(zip(ROW_FIELDS, values, strict=True))


@dataclass(frozen=True)
class Adopted:
    """What happened to one survey of `adopt_unmanaged`: its manifest and address, or why not."""

    ps_survey_id: int
    title: str
    address: str | None = None
    path: Path | None = None
    error: str | None = None


@dataclass(frozen=True)
class ProjectSurveys:
    """The project's Survey manifests, by name (their API bodies), and the environment's
    identity rule: what `adopt_unmanaged` adopts around."""

    bodies: Mapping[str, dict] = field(default_factory=dict)
    rule: Rule = field(default_factory=lambda: Rule(""))

    def describing(self, body: dict, unmanaged: Iterable[str]) -> str | None:
        """The name of the manifest among `unmanaged` that describes live survey `body`."""
        for name in unmanaged:
            if same_survey(body, self.bodies[name], address(SURVEY, name), self.rule):
                return name
        return None


def _number(value: object) -> int | float | None:
    """A count or price of the list as a number, also when the service writes it as text
    ("2.50", "1000"); None when it is not set ("") or names no number."""
    number = as_number(value)
    return number if isinstance(number, int | float) and not isinstance(number, bool) else None


def list_surveys(client: SurveySource, state: State, statuses: Iterable[int]) -> list[ListedSurvey]:
    """The account's surveys with one of `statuses`, by ps_survey_id, marked when managed."""
    wanted = sorted(set(statuses))
    managed = {
        record.ps_survey_id: resource
        for resource, record in state.resources.items()
        if isinstance(record, SurveyRecord)
    }
    listed = []
    for body in client.list_surveys(status=wanted):
        status = body.get("ps_survey_status")
        if status not in wanted:
            continue
        survey_id = int(body["ps_survey_id"])
        listed.append(
            ListedSurvey(
                ps_survey_id=survey_id,
                status=status,
                title=str(body.get("survey_title") or ""),
                localization=body.get("survey_localization"),
                completes_required=_number(body.get("completes_required")),
                offer_price=_number(body.get("offer_price")),
                managed_as=managed.get(survey_id),
            )
        )
    return sorted(listed, key=lambda survey: survey.ps_survey_id)


def name_from_title(title: str, survey_id: int, taken: set[str]) -> str:
    """A manifest name for a survey titled `title` that is not in `taken` (and adds it there):
    the title in lowercase ASCII with every other run of characters turned into one dash,
    then `-2`, `-3`... when that name is taken; `survey-<id>` for a title with no letters."""
    ascii_title = unicodedata.normalize("NFKD", title).encode("ascii", "ignore").decode()
    base = re.sub(r"[^a-z0-9]+", "-", ascii_title.lower()).strip("-")
    base = base[:MAX_NAME].rstrip("-") or f"survey-{survey_id}"
    name, number = base, 2
    while name in taken:
        suffix = f"-{number}"
        name = base[: MAX_NAME - len(suffix)].rstrip("-") + suffix
        number += 1
    taken.add(check_name(name))
    return name


def adopt_unmanaged(
    client: SurveySource,
    store: StateBackend,
    out_dir: Path,
    statuses: Iterable[int],
    parallelism: int = DEFAULT_PARALLELISM,
    on_adopted: Callable[[Adopted], None] | None = None,
    project: ProjectSurveys | None = None,
) -> list[Adopted]:
    """Imports every unmanaged survey of `statuses` into `out_dir` and the state; the caller
    holds the state lock. One survey that cannot be adopted does not stop the others."""
    project = project or ProjectSurveys()
    state = store.load()
    if state.journal:
        pending = ", ".join(sorted(state.journal))
        raise ImportRefused(
            f"the state holds an unresolved create ({pending}); one of the unmanaged surveys "
            "may be the one it made: adopt that one under its own name first with "
            "`surveyctl import SURVEY_ID --name NAME`, or forget the attempt with "
            "`surveyctl state rm ADDRESS`"
        )
    unmanaged = [s for s in list_surveys(client, state, statuses) if s.managed_as is None]
    taken = {name_of(a) for a in state.resources if kind_of(a) == SURVEY}
    taken |= {path.stem for path in out_dir.glob("*.y*ml")} | set(project.bodies)
    orphans = [n for n in project.bodies if address(SURVEY, n) not in state.resources]
    names = {s.ps_survey_id: name_from_title(s.title, s.ps_survey_id, taken) for s in unmanaged}
    bodies = fetch_all(
        client,
        ((str(s.ps_survey_id), lambda c, i=s.ps_survey_id: c.get_survey(i)) for s in unmanaged),
        parallelism,
    )
    results = []
    for survey in unmanaged:
        name = names[survey.ps_survey_id]
        outcome = _adopt_one(store, out_dir, survey, name, bodies, project, orphans)
        results.append(outcome)
        if on_adopted is not None:
            on_adopted(outcome)
    return results


def _adopt_one(
    store: StateBackend,
    out_dir: Path,
    survey: ListedSurvey,
    name: str,
    bodies,
    project: ProjectSurveys,
    orphans: list[str],
) -> Adopted:
    result = bodies[str(survey.ps_survey_id)]
    try:
        if result.body is None:
            reason = "it is gone" if result.gone else result.error
            raise ImportRefused(f"cannot read survey {survey.ps_survey_id}: {reason}")
        owner = project.describing(result.body, orphans)
        if owner is not None:
            raise _left_to_manifest(survey.ps_survey_id, owner)
        adoption = survey_adoption(result.body, address(SURVEY, name))
        path = out_dir / f"{name}.yaml"
        save_adoption(store, adoption, path)
    except SurveyctlError as exc:
        return Adopted(survey.ps_survey_id, survey.title, error=str(exc))
    return Adopted(survey.ps_survey_id, survey.title, adoption.address, path)


def _left_to_manifest(survey_id: int, name: str) -> ImportRefused:
    return ImportRefused(
        f"survey {survey_id} is the one the manifest of {address(SURVEY, name)} describes, "
        f"which the state does not manage: `surveyctl import {survey_id} --name "
        f"{shlex.quote(name)}` records it under that manifest (`surveyctl state rebuild` does "
        "so for every manifest)"
    )
