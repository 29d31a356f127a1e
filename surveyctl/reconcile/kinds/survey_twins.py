"""The survey kind's identity: the surveys of the account that are a manifest's, by the rule.

Each manifest of a create is compared with every survey of the account the state does not
manage (`same_survey`: title and locale, or external_project_id), and with those it manages
under an address no manifest describes any more (a renamed manifest). A closed survey of the
same title is an earlier wave, not this one, unless it is the same market and wave of a
program moved or renamed; a renamed program's member is found by its market and wave even when
its title changed with the name. Groups find theirs in `kinds/group.py`.
"""

from __future__ import annotations

from surveyctl.api.account_surveys import Lister, account_surveys
from surveyctl.errors import SurveyctlError, key_refused
from surveyctl.model import Survey
from surveyctl.reconcile.identity import Identity, Rule, Twin, same_survey
from surveyctl.resources import SURVEY, member_of, split_address
from surveyctl.state import State, SurveyRecord
from surveyctl.statuses import CLOSED


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
