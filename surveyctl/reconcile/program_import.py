"""Adopting surveys run by hand as members of a SurveyProgram.

A team that ran a tracker's waves as separate surveys writes the program that describes them,
then `surveyctl import --program NAME` records each live survey under the member it is:
a member not yet in state is matched to the one survey of the account that is the member's by
the environment's identity rule (`reconcile.identity.same_survey`: the same title and locale, or
the same external_project_id where the environment opts in), and a member's exclusion group to
the live group with its reference. Each is recorded as if surveyctl had applied the member's
body, so a program that describes the surveys as they are plans "No changes", and one that
differs plans exactly the difference. A member with no match is left to plan as a create; one
with several matches is refused (naming them), never guessed.
"""

from __future__ import annotations

from dataclasses import dataclass, field

from surveyctl.errors import ApiError, SurveyctlError
from surveyctl.model import DesiredState, Survey
from surveyctl.reconcile.choices import DEFAULT_PARALLELISM
from surveyctl.reconcile.identity import Rule, same_survey
from surveyctl.reconcile.kinds.group import api_body, member_ids
from surveyctl.reconcile.marketplace import Marketplace
from surveyctl.resources import EXCLUSION_GROUP, SURVEY, address
from surveyctl.state import GroupRecord, Record, State, SurveyRecord


class ProgramImportError(SurveyctlError):
    """A program that cannot be imported: unknown, or named nothing to adopt."""


@dataclass
class ProgramAdoption:
    """What importing a program found: records to write, and members left as they are."""

    records: dict[str, Record] = field(default_factory=dict)  # address -> record
    matched: dict[str, int | str] = field(default_factory=dict)  # address -> id or ref
    unmatched: list[str] = field(default_factory=list)  # planned as creates
    ambiguous: dict[str, list[int]] = field(default_factory=dict)  # address -> candidates
    managed: list[str] = field(default_factory=list)  # already in state


def adopt_program(
    client: Marketplace, desired: DesiredState, state: State, program: str, rule: Rule
) -> ProgramAdoption:
    """The records that attach the live surveys and groups of `program`'s members."""
    if program not in desired.programs:
        known = ", ".join(sorted(desired.programs)) or "none"
        raise ProgramImportError(f"no SurveyProgram is named {program!r}; programs: {known}")
    found = ProgramAdoption()
    managed_ids = {r.ps_survey_id for r in state.resources.values() if isinstance(r, SurveyRecord)}
    unmanaged = [
        live for live in client.list_surveys() if int(live["ps_survey_id"]) not in managed_ids
    ]
    ids: dict[str, int] = {}
    adopted: dict[str, Survey] = {}  # address -> the member's manifest, matched once
    for name, survey in desired.surveys.items():
        if survey.member is None or survey.member.program != program:
            continue
        member_address = address(SURVEY, name)
        record = state.resources.get(member_address)
        if isinstance(record, SurveyRecord):
            found.managed.append(member_address)
            ids[name] = record.ps_survey_id
            continue
        body = survey.body()
        matches = sorted(
            {
                int(live["ps_survey_id"])
                for live in unmanaged
                if same_survey(live, body, member_address, rule)
            }
        )
        if len(matches) > 1:
            found.ambiguous[member_address] = matches
        elif not matches:
            found.unmatched.append(member_address)
        else:
            adopted[member_address] = survey
            found.matched[member_address] = matches[0]
            ids[name] = matches[0]
    found.records.update(_survey_records(client, adopted, found.matched))
    _adopt_groups(client, desired, state, program, ids, found)
    return found


def _survey_records(
    client: Marketplace, surveys: dict[str, Survey], matched: dict[str, int | str]
) -> dict[str, SurveyRecord]:
    """The record of each adopted member (address -> its survey), whose quotas' ids come from
    a read of the survey it matched: the reads go out side by side, as a plan's do (a program
    of 720 members waited for 720 reads one after the other); the first that fails ends the
    import, before anything is recorded."""
    from concurrent.futures import ThreadPoolExecutor

    addresses = list(surveys)
    with ThreadPoolExecutor(max_workers=DEFAULT_PARALLELISM) as pool:
        lives = pool.map(lambda a: client.get_survey(int(matched[a])), addresses)
        return {
            a: _survey_record(live, surveys[a], int(matched[a]))
            for a, live in zip(addresses, lives, strict=True)
        }


def _survey_record(live: dict, survey: Survey, survey_id: int) -> SurveyRecord:
    quota_ids = {
        str(q["buyer_quota_id"]): str(q["ps_quota_id"])
        for q in live.get("quotas") or []
        if q.get("buyer_quota_id") and q.get("ps_quota_id")
    }
    return SurveyRecord(survey_id, quota_ids, survey.body(), survey.lifecycle.prevent_destroy)


def _adopt_groups(
    client: Marketplace,
    desired: DesiredState,
    state: State,
    program: str,
    ids: dict[str, int],
    found: ProgramAdoption,
) -> None:
    """A member's group is adopted when a live group has its reference and every survey it
    names is known (adopted or managed); its body is the manifest's, as apply records it. The
    groups are read side by side, as the surveys are."""
    from concurrent.futures import ThreadPoolExecutor

    members = {
        address(EXCLUSION_GROUP, name): group
        for name, group in desired.groups.items()
        if group.member is not None and group.member.program == program
    }
    readable = [
        group_address
        for group_address, group in members.items()
        if group_address not in state.resources and all(s in ids for s in group.surveys)
    ]
    with ThreadPoolExecutor(max_workers=DEFAULT_PARALLELISM) as pool:
        reads = pool.map(lambda a: _live_group(client, members[a].buyer_surveygroup_ref), readable)
        lives = dict(zip(readable, reads, strict=True))
    for group_address, group in members.items():
        if group_address in state.resources:
            found.managed.append(group_address)
            continue
        live = lives.get(group_address)
        if live is None:  # a survey of it not known, or no live group has its reference
            found.unmatched.append(group_address)
            continue
        body = api_body(group.body(), ids)
        live_ids = member_ids(live)
        found.records[group_address] = GroupRecord(
            group.buyer_surveygroup_ref, live_ids, body, group.lifecycle.prevent_destroy
        )
        found.matched[group_address] = group.buyer_surveygroup_ref


def _live_group(client: Marketplace, ref: str) -> dict | None:
    """The live group `ref`; None when the service has none (404)."""
    try:
        return client.get_group(ref)
    except ApiError as exc:
        if exc.status != 404:
            raise
        return None
