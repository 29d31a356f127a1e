"""Identity: the resource on the service that a manifest describes, whatever the state says.

The state records what surveyctl made; it is not the only proof of it. A state can be lost (a
CI checkout starts without `.surveyctl/`), emptied or kept somewhere else, and a plan made
from it would create every survey a second time. So before a plan creates anything it looks
for the resource on the service, among what this environment's state does not manage
(docs/state.md, "Identity"):

- A survey is the manifest's when both have the same `survey_title` and
  `survey_localization` (rule `title`, the default). Closed surveys do not count under this
  rule: a tracker's earlier waves share the title of the next wave, and a rule that withheld
  every new wave would be as useless as one that duplicates. They are named in a note.
- With `identity: external_project_id` on the environment, every create carries
  `external_project_id: <environment>/<address>` (unless the manifest sets one), and a survey
  with that value is the manifest's whatever its status; a survey with no external_project_id
  still matches by title and locale as above (made before the opt-in, or by hand), and so does
  one stamped for an address no manifest describes in this environment (a renamed manifest or
  environment: the stamp stays); one with another value is another resource. A manifest that
  sets external_project_id itself is matched by it under either rule.
- An exclusion group is the manifest's when it has its `buyer_surveygroup_ref`, which the
  service keeps globally unique (one GET per group to be created).

Each kind applies its own rule (`Kind.find_twins`: surveys through `survey_twins` here, groups
in `kinds/group.py`; a kind without one creates as before); `surveyctl.reconcile.twins` asks
the kinds only when a create is due (a plan without creates costs no request more: for surveys
the survey list, all statuses and pages, once, its pages read in parallel), and `settle`
applies what they found to the plan. One twin: the create is withheld with an error
note giving the two ways out (`surveyctl import`, or `--adopt`), or with `--adopt` the twin is
recorded (`Plan.recovered`, written by apply before its writes) and the plan goes on against it
as an ordinary update. Several twins (or one twin that two manifests claim): all named,
withheld, and `--adopt` does not choose. `--allow-duplicate` lets the create through, with a
warning naming the twins. The recovery of a create whose answer was lost
(`surveyctl.reconcile.recovery`) uses `same_survey`, the one definition of the same survey.
"""

from __future__ import annotations

import shlex
from collections import Counter
from collections.abc import Collection
from concurrent.futures import ThreadPoolExecutor
from dataclasses import dataclass, field
from typing import Protocol

from surveyctl.api.reading import check_next_page
from surveyctl.api.surveys import SURVEYS_PAGE_SIZE
from surveyctl.config import Environment
from surveyctl.config_checks import valid_environment_name
from surveyctl.errors import SurveyctlError, key_refused
from surveyctl.model import Survey
from surveyctl.reconcile.plan import Note, Plan
from surveyctl.resources import SURVEY, member_of, split_address, valid_name
from surveyctl.state import Record, State, SurveyRecord
from surveyctl.statuses import CLOSED, SURVEY_STATUSES, survey_status_name

# The named options of plan and apply (recorded in a saved plan with the guard overrides).
ADOPT = "adopt"
DUPLICATE = "duplicate"
TITLE = "title"
EXTERNAL_ID = "external_project_id"
_LISTED = 10  # how many twins a note names


class Lister(Protocol):
    """What the survey rule needs of the marketplace client: the list, page by page."""

    def list_surveys(
        self, status: list[int] | None = None, *, targeting: bool = True
    ) -> list[dict]: ...


@dataclass(frozen=True)
class Rule:
    """An environment's identity rule: `by` is "title" or "external_project_id"."""

    environment: str
    by: str = TITLE

    @classmethod
    def of(cls, environment: Environment) -> Rule:
        return cls(environment.name, environment.identity)

    def external_id(self, resource_address: str) -> str:
        """The external_project_id surveyctl gives a survey it creates under this rule."""
        return f"{self.environment}/{resource_address}"


@dataclass(frozen=True)
class Twin:
    """A resource on the service that is the manifest's, by the rule (`why`)."""

    remote_id: int | str  # ps_survey_id, or buyer_surveygroup_ref
    why: str  # "same title and locale", "same external_project_id", "same reference"
    status: int | None = None
    created: str | None = None
    noun: str = "survey"  # the kind's noun: "survey", "group"
    # The address the state manages it as, when no manifest describes that address any more
    # (a renamed manifest): the create would duplicate a resource surveyctl made.
    managed_as: str | None = None

    @property
    def duplicable(self) -> bool:
        """Whether another one can be created beside it: not a group, whose reference the
        service keeps unique."""
        return self.noun == "survey"

    def shown(self) -> str:
        managed = f", managed as {self.managed_as}" if self.managed_as else ""
        if self.noun != "survey":
            return f"{self.noun} {self.remote_id}{managed}"
        created = f", created {self.created}" if self.created else ""
        return f"survey {self.remote_id} ({survey_status_name(self.status)}{created}{managed})"

    def import_command(self, name: str, remote_id: object = None) -> str:
        """The command that adopts it (or, with `remote_id` "ID", any one) as manifest `name`,
        quoted for a shell where it needs to be (a program member's name)."""
        command = "import" if self.noun == "survey" else f"import-{self.noun}"
        chosen = self.remote_id if remote_id is None else remote_id
        return f"`surveyctl {command} {chosen} --name {shlex.quote(name)}`"


@dataclass
class Identity:
    """What `find_twins` found for the creates of a plan, by address."""

    twins: dict[str, list[Twin]] = field(default_factory=dict)
    earlier: dict[str, list[Twin]] = field(default_factory=dict)  # closed, same title: waves
    unchecked: dict[str, str] = field(default_factory=dict)  # why it could not be looked for
    # Managed addresses that no manifest describes (removed or renamed manifests): a twin
    # managed as one of them is a rename, not a survey the state lost.
    unlisted: set[str] = field(default_factory=set)
    described: set[str] = field(default_factory=set)  # the addresses the manifests describe
    # The programs the manifests describe: a member managed under a program none of them names
    # any more is a renamed program's, and a program still named was split, not renamed.
    programs: set[str] = field(default_factory=set)
    refused: dict[str, str] = field(default_factory=dict)  # a create the service would refuse
    adopted: dict[str, Record] = field(default_factory=dict)  # with --adopt: one twin each
    requests: int = 0  # reads made (for the benchmark and the tests)

    def renamed(self) -> dict[str, Twin]:
        """Creates whose one twin the state manages under an address no manifest describes."""
        return {
            a: twins[0]
            for a, twins in self.twins.items()
            if len(twins) == 1 and twins[0].managed_as is not None
        }

    def ambiguous(self) -> dict[str, list[Twin]]:
        """Twins --adopt cannot take: several for one manifest, or one several manifests claim."""
        claims = Counter(t.remote_id for twins in self.twins.values() for t in twins)
        return {
            a: twins
            for a, twins in self.twins.items()
            if len(twins) > 1 or claims[twins[0].remote_id] > 1
        }


def stamped(body: dict, resource_address: str, rule: Rule) -> dict:
    """The body a create sends: with the external_project_id the rule fills in."""
    if rule.by != EXTERNAL_ID or body.get(EXTERNAL_ID):
        return body
    return {**body, EXTERNAL_ID: rule.external_id(resource_address)}


def same_survey(
    listed: dict,
    body: dict,
    resource_address: str,
    rule: Rule,
    described: Collection[str] | None = None,
) -> str | None:
    """Why survey `listed` is the one `body` (a manifest's) describes, or None: the one
    definition of "the same survey" for creates, lost creates and `state rebuild`.

    `described` (the addresses the manifests describe, where the caller knows them): a survey
    stamped by the external_project_id rule for an address none of them is in this
    environment, or in another environment, is matched by title and locale instead. Such a
    stamp is what a renamed manifest (`state mv` included), or a renamed environment, leaves
    on the service; taking it for another resource would create the survey a second time."""
    wanted = stamped(body, resource_address, rule).get(EXTERNAL_ID)
    theirs = listed.get(EXTERNAL_ID)
    if wanted and theirs:
        if theirs == wanted:
            return "same external_project_id"
        if described is None or not _stamp_of_no_manifest(theirs, rule, described):
            return None
    if (listed.get("survey_title"), listed.get("survey_localization")) == (
        body.get("survey_title"),
        body.get("survey_localization"),
    ):
        return "same title and locale"
    return None


def _stamp_of_no_manifest(value: object, rule: Rule, described: Collection[str]) -> bool:
    """Whether `value` is an external_project_id this rule stamps (`<environment>/Survey/<name>`)
    but not the one of an address `described` holds in this environment."""
    if not isinstance(value, str):
        return False
    environment, _, resource_address = value.partition("/")
    kind, _, name = resource_address.partition("/")
    if not valid_environment_name(environment) or kind != SURVEY:
        return False
    if not (valid_name(name) or member_of(name) is not None):
        return False
    return environment != rule.environment or resource_address not in described


def adopted_state(state: State, identity: Identity) -> State:
    """`state` with the adopted resources recorded, as the planner should plan against."""
    if not identity.adopted:
        return state
    adopted = state.copy()
    adopted.resources.update(identity.adopted)
    return adopted


def settle(plan: Plan, identity: Identity, rule: Rule, overrides: frozenset[str]) -> None:
    """Applies what `find_twins` found to `plan` (made against `adopted_state`): withholds the
    creates of resources that exist, records the adopted ones, says why in notes, and stamps
    the creates that go ahead (`stamped`)."""
    withheld: set[str] = set()
    ambiguous = identity.ambiguous()
    renamed = identity.renamed()
    destroyed = {r.address for r in plan.resources if r.action == "delete"}
    for resource_address, twins in sorted(identity.twins.items()):
        if resource_address in identity.unchecked:
            continue  # its adoption could not read the twin: held back below
        if resource_address in renamed and renamed[resource_address].managed_as in destroyed:
            continue  # a replacement: this plan destroys the old address (--destroy)
        if resource_address in identity.adopted:
            plan.recovered[resource_address] = identity.adopted[resource_address].to_json()
            plan.adopted.append(resource_address)
            plan.notes.append(Note("note", resource_address, _adopted_message(twins[0])))
        elif DUPLICATE in overrides and twins[0].duplicable:
            plan.notes.append(
                Note(
                    "warning",
                    resource_address,
                    f"exists on the service as {_listed(twins)} but is not in state"
                    + (" under this address" if any(t.managed_as for t in twins) else "")
                    + "; created once more, as --allow-duplicate says",
                )
            )
        elif resource_address in renamed:
            withheld.add(resource_address)
            message = _renamed_message(
                resource_address, renamed[resource_address], identity.programs
            )
            plan.notes.append(Note("error", resource_address, message))
        else:
            withheld.add(resource_address)
            message = _twin_message(resource_address, twins, resource_address in ambiguous)
            adopting = ADOPT in overrides and resource_address in ambiguous
            plan.notes.append(
                Note("error", resource_address, message + (_REFUSE_CHOICE if adopting else ""))
            )
    for resource_address, reason in sorted(identity.refused.items()):
        withheld.add(resource_address)
        plan.notes.append(Note("error", resource_address, reason))
    for resource_address, problem in sorted(identity.unchecked.items()):
        withheld.add(resource_address)
        plan.unread.append(resource_address)
        plan.unchecked.append(resource_address)
        plan.notes.append(
            Note(
                "warning",
                resource_address,
                f"cannot check whether it exists on the service already (reading {problem}); "
                "it is left out of this plan and apply does not create it (run it again)",
            )
        )
    plan.unread.sort()
    plan.unchecked.sort()
    planned = []
    for resource in plan.resources:
        if resource.action == "create" and resource.address in withheld:
            continue
        if resource.action == "create" and resource.kind == SURVEY and resource.body:
            resource.body = stamped(resource.body, resource.address, rule)
            earlier = identity.earlier.get(resource.address)
            if earlier and resource.address not in identity.twins:
                plan.notes.append(Note("note", resource.address, _earlier_message(earlier)))
        planned.append(resource)
    plan.resources = planned


_REFUSE_CHOICE = "; --adopt does not choose between them"


def _twin_message(resource_address: str, twins: list[Twin], ambiguous: bool) -> str:
    name = split_address(resource_address)[1]
    twin = twins[0]
    if len(twins) > 1 or ambiguous:
        others = " (another manifest matches it too)" if len(twins) == 1 else ""
        more = ", or create one more with --allow-duplicate" if twin.duplicable else ""
        return (
            f"exists on the service more than once: {_listed(twins)}{others}, but is not in "
            f"state; adopt the right one with {twin.import_command(name, 'ID')} for the one it "
            f"is{more}"
        )
    more = "; --allow-duplicate creates another one beside it" if twin.duplicable else ""
    return (
        f"exists on the service as {twin.noun} {twin.remote_id} ({twin.why}) but is not in "
        f"state; adopt it with {twin.import_command(name)}, or plan and apply with --adopt "
        f"(records it, then plans the differences as updates){more}"
    )


def state_mv_command(old: str, new: str, programs: set[str]) -> str:
    """The `state mv` that moves the record of `old` to `new`: for members of a renamed
    program (one no manifest names any more, `programs` being those they name), the one
    command that moves all its members. A program still named had some of its members moved
    to another (split): `--program` would move the members it keeps too, so one member."""
    was, now = member_of(split_address(old)[1]), member_of(split_address(new)[1])
    if was is not None and now is not None and was.program != now.program:
        if was.program not in programs:
            return f"surveyctl state mv --program {was.program} {now.program}"
    return f"surveyctl state mv {shlex.quote(old)} {shlex.quote(new)}"


def _renamed_message(resource_address: str, twin: Twin, programs: set[str]) -> str:
    old = twin.managed_as or ""
    move = state_mv_command(old, resource_address, programs)
    return (
        f"exists on the service as {twin.noun} {twin.remote_id} ({twin.why}), which the state "
        f"manages as {old}, no longer in the manifests; if the manifest was renamed, run "
        f"`{move}` and plan again (it keeps its id and its fieldwork); --allow-duplicate "
        "creates another one beside it"
    )


def _adopted_message(twin: Twin) -> str:
    return (
        f"exists on the service as {twin.noun} {twin.remote_id} ({twin.why}) and is adopted "
        "(--adopt): apply records it in the state before its writes"
    )


def _earlier_message(earlier: list[Twin]) -> str:
    return (
        f"closed {_listed(earlier)} share its title and locale; closed surveys are taken as "
        "earlier waves, not as this one (docs/state.md, Identity)"
    )


def _listed(twins: list[Twin]) -> str:
    shown = ", ".join(t.shown() for t in twins[:_LISTED])
    more = f" and {len(twins) - _LISTED} more" if len(twins) > _LISTED else ""
    return shown + more


# -- reading -------------------------------------------------------------------------------


# The most pages of one status read side by side as the list's total_pages announces them
# (100,000 surveys); pages past them are read one by one while full.
MAX_ANNOUNCED_PAGES = 1000


def account_surveys(client: Lister, parallelism: int = 10) -> tuple[list[dict], int]:
    """Every survey of the account (all statuses, all pages, without targeting) and the
    number of pages read. The first page of each status is read at once (four in parallel);
    the pages it announces (`total_pages`) are then read `parallelism` at a time rather than
    one after the other (10,000 surveys are a hundred pages). Where a status's last page is
    full, the pages after it are read on until one is not (a list without `total_pages`)."""
    statuses = sorted(SURVEY_STATUSES.values())

    def page(key: tuple[int, int]) -> list[dict]:
        status, number = key
        items, _total = client.get_surveys_page(page=number, status=status, targeting=False)
        return items

    def totals(status: int) -> tuple[list[dict], int]:
        return client.get_surveys_page(page=1, status=status, targeting=False)

    with ThreadPoolExecutor(max_workers=len(statuses)) as pool:
        firsts = dict(zip(statuses, pool.map(totals, statuses), strict=True))
    # The announced pages are read side by side up to a bound (the header is the service's
    # word: 999999999 pages would be a list of a billion reads); full pages past it are read
    # on one by one, below, as a list without the header is.
    rest = [
        (s, n)
        for s, (items, total) in firsts.items()
        if items
        for n in range(2, min(total, MAX_ANNOUNCED_PAGES) + 1)
    ]
    with ThreadPoolExecutor(max_workers=max(1, parallelism)) as pool:
        pages = dict(zip(rest, pool.map(page, rest), strict=True))
    pages.update({(status, 1): items for status, (items, _) in firsts.items()})
    for status in statuses:
        number = max(n for s, n in pages if s == status)
        for read in range(2, number + 1):  # the announced pages, read side by side above
            check_next_page(
                "the survey list", read, pages[(status, read)], pages[(status, read - 1)]
            )
        while len(pages[(status, number)]) >= SURVEYS_PAGE_SIZE:
            number += 1
            pages[(status, number)] = page((status, number))
            check_next_page(
                "the survey list", number, pages[(status, number)], pages[(status, number - 1)]
            )
    found = [item for items in pages.values() for item in items if isinstance(item, dict)]
    return found, len(pages)


def survey_twins(
    client: Lister,
    wanted: dict[str, Survey],
    state: State,
    rule: Rule,
    found: Identity,
    parallelism: int = 10,
) -> None:
    """The survey kind's identity: looks for the survey of each manifest of `wanted` (address
    -> manifest) among the surveys of the account the state does not manage."""
    try:
        listed, reads = account_surveys(client, parallelism)
    except SurveyctlError as exc:
        if (refused := key_refused(exc)) is not None:
            raise refused from exc  # every create would be noted alike
        for resource_address in wanted:
            found.unchecked[resource_address] = f"the survey list: {exc}"
        return
    found.requests += reads
    managed = {r.ps_survey_id: a for a, r in state.resources.items() if isinstance(r, SurveyRecord)}
    candidates = [
        s
        for s in listed
        if s.get("ps_survey_id") not in managed or managed[s["ps_survey_id"]] in found.unlisted
    ]
    for resource_address, survey in wanted.items():
        body = survey.body()
        for item in candidates:
            why = same_survey(item, body, resource_address, rule, found.described)
            if why is None or not isinstance(item.get("ps_survey_id"), int):
                continue
            twin = Twin(
                item["ps_survey_id"],
                why,
                item.get("ps_survey_status"),
                item.get("project_creation_date"),
                managed_as=managed.get(item["ps_survey_id"]),
            )
            closed_wave = (
                twin.status == CLOSED
                and why == "same title and locale"
                and not _moved_member(twin.managed_as, resource_address)
            )
            into = found.earlier if closed_wave else found.twins
            into.setdefault(resource_address, []).append(twin)
    _renamed_programs(wanted, state, listed, found)
    for twins in (*found.twins.values(), *found.earlier.values()):
        twins.sort(key=lambda t: t.remote_id)


def _moved_member(old: str | None, new: str) -> bool:
    """Whether `new` is the member `old` was, moved to another program (same market and
    wave): a renamed or split program's, which a closed survey is too (no earlier wave)."""
    if old is None:
        return False
    was, now = member_of(split_address(old)[1]), member_of(split_address(new)[1])
    if was is None or now is None:
        return False
    return was.program != now.program and (was.market, was.wave) == (now.market, now.wave)


def _renamed_programs(
    wanted: dict[str, Survey], state: State, listed: list[dict], found: Identity
) -> None:
    """Twins by name for members of a renamed program: the survey the state manages as the
    same market and wave of a program no manifest names any more. The title cannot find it
    when it changed with the name (`{program}` in it) or the program since the wave closed,
    and a create would run that wave a second time."""
    former: dict[tuple[str, str], list[str]] = {}
    for old in found.unlisted:
        kind, name = split_address(old)
        was = member_of(name)
        if kind == SURVEY and was is not None and was.program not in found.programs:
            former.setdefault((was.market, was.wave), []).append(old)
    if not former:
        return
    by_id = {s.get("ps_survey_id"): s for s in listed}
    for resource_address in wanted:
        now = member_of(split_address(resource_address)[1])
        known = found.twins.get(resource_address, [])
        if now is None or any(t.managed_as for t in known):
            continue
        olds = former.get((now.market, now.wave), [])
        record = state.resources.get(olds[0]) if len(olds) == 1 else None
        item = by_id.get(record.ps_survey_id) if isinstance(record, SurveyRecord) else None
        if item is None:
            continue  # several former programs, or gone from the service: nothing to move
        was = member_of(split_address(olds[0])[1])
        twin = Twin(
            record.ps_survey_id,
            f"the same market and wave of program {was.program if was else '?'}, which no "
            "manifest names any more",
            item.get("ps_survey_status"),
            item.get("project_creation_date"),
            managed_as=olds[0],
        )
        found.twins.setdefault(resource_address, []).append(twin)
