"""Rules beyond the schema (spec 2.4, 2.6, 2.7, 2.9 and section 8), checked before any call.

Each rule adds every violation it finds, with the line of the field concerned, so that one
run of `surveyctl validate` shows all of them.
"""

from __future__ import annotations

from surveyctl.errors import Location
from surveyctl.fields import RESERVED_QUOTA_IDS, UNADDRESSABLE
from surveyctl.manifests.diagnostics import Diagnostics
from surveyctl.manifests.load import MarkedDict, MarkedList
from surveyctl.model import DesiredState, ExclusionGroup, Qualification, Survey
from surveyctl.resources import member_of
from surveyctl.suggest import suggest

RECONTACT = 1  # incl_excl value of a recontact survey (spec 2.1)
TRANSACTION_PLACEHOLDER = "[%%transaction_id%%]"
# The same macro as the service's own documentation writes it (public facts).
TRANSACTION_PLACEHOLDERS = (TRANSACTION_PLACEHOLDER, "[%%ps_transaction_id%%]")


def check_survey(survey: Survey, spec: MarkedDict, diagnostics: Diagnostics) -> None:
    """Every per-survey rule."""
    _unique_quota_ids(survey, diagnostics)
    _qlc(survey, spec, diagnostics)
    _qbp(survey, spec, diagnostics)
    _targeting(survey, diagnostics)
    _quota_sum(survey, diagnostics)
    _live_url(survey, diagnostics)
    _recontact(survey, diagnostics)


def check_partial_survey(
    survey: Survey, spec: MarkedDict, diagnostics: Diagnostics, quotas_whole: bool
) -> None:
    """The per-survey rules that a Survey failing the schema still allows, so that a schema
    error does not hide them: `survey` holds only its valid qualifications and quotas
    (`quotas_whole` when none was left out), and each rule runs only where the fields it
    reads are well typed, so that it neither repeats a schema error nor judges a guess."""
    _unique_quota_ids(survey, diagnostics)
    _targeting(survey, diagnostics)
    if quotas_whole and _flags_typed(spec.get("qlc"), ("enable",)):
        multiple = spec["qlc"].get("multiple_quotas")
        if multiple is None or _flags_typed(multiple, _QLC_OPTIONS):
            _qlc(survey, spec, diagnostics)
    qbp = spec.get("qbp")
    if quotas_whole and _flags_typed(qbp, ("enable",)):
        ids = qbp.get("quota_ids")
        if ids is None or (isinstance(ids, MarkedList) and all(isinstance(i, str) for i in ids)):
            _qbp(survey, spec, diagnostics)
    if isinstance(survey.settings.get("live_url"), str):
        _live_url(survey, diagnostics)
    incl_excl = survey.settings.get("incl_excl")
    if isinstance(incl_excl, int) and not isinstance(incl_excl, bool):
        _recontact(survey, diagnostics)


_QLC_OPTIONS = ("enable", "count_by_quota", "compensate_by_quota")


def _flags_typed(block: object, flags: tuple[str, ...]) -> bool:
    """Whether `block` is a mapping whose `flags` are true, false or absent."""
    return isinstance(block, MarkedDict) and all(
        isinstance(block.get(flag, False), bool) for flag in flags
    )


def _live_url(survey: Survey, diagnostics: Diagnostics) -> None:
    live_url = survey.settings.get("live_url", "")
    if not any(placeholder in live_url for placeholder in TRANSACTION_PLACEHOLDERS):
        # Without it the buyer's survey cannot send the respondent back with the transaction.
        diagnostics.warning(
            f"live_url of survey {survey.name!r} carries no {TRANSACTION_PLACEHOLDER} (or "
            f"{TRANSACTION_PLACEHOLDERS[1]}), so the return link cannot name the respondent's "
            "transaction",
            survey.location_of("live_url"),
        )


def _recontact(survey: Survey, diagnostics: Diagnostics) -> None:
    if survey.settings.get("incl_excl") == RECONTACT:
        for field in ("buyer_surveygroup_ref", "buyer_surveygroup_refs"):
            if survey.settings.get(field):
                diagnostics.error(
                    f"Survey {survey.name!r} is a recontact survey (incl_excl 1) and cannot "
                    f"join an exclusion group through {field}",
                    survey.location_of(field),
                )


def _unique_quota_ids(survey: Survey, diagnostics: Diagnostics) -> None:
    first: dict[str, object] = {}
    for quota in survey.quotas or []:
        if quota.buyer_quota_id in UNADDRESSABLE:
            diagnostics.error(
                f"buyer_quota_id {quota.buyer_quota_id!r} cannot be used: the quota's URL path "
                "carries it, where it would name the survey itself; choose another",
                quota.location,
            )
        if quota.buyer_quota_id in RESERVED_QUOTA_IDS:
            diagnostics.error(
                f"buyer_quota_id {quota.buyer_quota_id!r} cannot be used: "
                f"/surveys/{{id}}/quotas/{quota.buyer_quota_id} is the quota performance call, "
                "so the quota could never be updated on its own; choose another",
                quota.location,
            )
        seen = first.get(quota.buyer_quota_id)
        if seen is None:
            first[quota.buyer_quota_id] = quota.location
            continue
        origin = " (made by a generator)" if quota.generated else ""
        diagnostics.error(
            f"buyer_quota_id {quota.buyer_quota_id!r}{origin} is used twice in survey "
            f"{survey.name!r}; first at line {getattr(seen, 'line', '?')}",
            quota.location,
        )


def _qlc(survey: Survey, spec: MarkedDict, diagnostics: Diagnostics) -> None:
    qlc = spec.get("qlc")
    if not isinstance(qlc, MarkedDict):
        return
    multiple = qlc.get("multiple_quotas")
    multiple = multiple if isinstance(multiple, MarkedDict) else MarkedDict()
    if qlc.get("enable"):
        if not survey.quotas:
            diagnostics.error(
                "qlc.enable is true but the survey has no quotas; quota level complete needs "
                "at least one quota (the service answers 1014)",
                qlc.where("enable"),
            )
        if multiple.get("enable") is not True:
            diagnostics.error(
                "qlc.multiple_quotas.enable must be true when qlc.enable is true",
                multiple.where("enable") if "enable" in multiple else qlc.where("enable"),
            )
        for option in _QLC_OPTIONS[1:]:
            if multiple.get(option) is True:
                # A warning, not an error: the service's answer to true is not shown, and the
                # default sandbox takes it as real buyers send it; a strict one refuses it.
                diagnostics.warning(
                    f"qlc.multiple_quotas.{option} is true; the API says to omit it or send "
                    "false (spec 2.7), and `surveyctl sandbox serve --strict` refuses it",
                    multiple.where(option),
                )
        return
    for option in _QLC_OPTIONS:
        if multiple.get(option) is True:
            diagnostics.error(
                f"qlc.multiple_quotas.{option} is true while qlc.enable is not; no other QLC "
                "option may be true when QLC is off",
                multiple.where(option),
            )


def _qbp(survey: Survey, spec: MarkedDict, diagnostics: Diagnostics) -> None:
    qbp = spec.get("qbp")
    if not isinstance(qbp, MarkedDict):
        return
    if qbp.get("enable") is True and not survey.quotas:
        diagnostics.error(
            "qbp.enable is true but the survey has no quotas; quota based pricing needs at "
            "least one quota (the service answers 1007)",
            qbp.where("enable"),
        )
    if not isinstance(qbp.get("quota_ids"), MarkedList):
        return
    ids = [quota.buyer_quota_id for quota in survey.quotas or []]
    listed: MarkedList = qbp["quota_ids"]
    for index, quota_id in enumerate(listed):
        if quota_id not in ids:
            diagnostics.error(
                f"qbp.quota_ids names {quota_id!r}, which is not a buyer_quota_id of survey "
                f"{survey.name!r}{suggest(quota_id, ids)}",
                listed.where(index),
            )


def _targeting(survey: Survey, diagnostics: Diagnostics) -> None:
    """Each qualification or criterion says what it targets, once, with sound ranges."""
    seen: dict[object, int] = {}
    for item in survey.qualifications or []:
        _criterion_shape(item, "qualification", diagnostics)
        key = item.qualification_code if item.resolved else (item.attribute or "").casefold()
        if key in seen:
            diagnostics.error(
                f"Qualification {item.attribute or item.qualification_code} is given twice "
                f"in survey {survey.name!r} (first at line {seen[key]})",
                item.location,
            )
        else:
            seen[key] = item.location.line if item.location else 0
    for quota in survey.quotas or []:
        for criterion in quota.criteria:
            # Generated quotas share their cells' criteria: report a bad cell once.
            label = "generated criterion" if quota.generated else "criterion"
            _criterion_shape(
                criterion,
                f"{label} of quota {quota.buyer_quota_id!r}" if not quota.generated else label,
                diagnostics,
            )


def _criterion_shape(item: Qualification, label: str, diagnostics: Diagnostics) -> None:
    given = [
        name
        for name, value in (
            ("condition_codes", item.condition_codes),
            ("answers", item.answers),
            ("range_sets", item.range_sets),
        )
        if value is not None
    ]
    target = item.attribute or item.qualification_code
    if len(given) != 1:
        what = "none" if not given else " and ".join(given)
        diagnostics.error(
            f"The {label} for {target} needs exactly one of condition_codes, answers or "
            f"range_sets, not {what}",
            item.location,
        )
    for range_set in item.range_sets or []:
        if range_set.start > range_set.end:
            diagnostics.error(
                f"The {label} for {target} has a range from {range_set.start:g} to "
                f"{range_set.end:g}; from must not exceed to",
                item.location,
            )


def _quota_sum(survey: Survey, diagnostics: Diagnostics) -> None:
    if not survey.quotas:
        return
    total = sum(quota.required_count for quota in survey.quotas)
    goal = survey.settings["completes_required"]
    for quota in survey.quotas:
        if quota.required_count > goal:
            # Flexibility lets the quotas sum above the goal, but the marketplace pauses the
            # survey once its goal is reached (spec 1.5): one quota above it never fills.
            diagnostics.warning(
                f"Quota {quota.buyer_quota_id!r} of survey {survey.name!r} asks for "
                f"{quota.required_count} completes, more than completes_required {goal}: the "
                "marketplace pauses the survey at its goal, so the quota can never fill",
                quota.location or survey.location_of("quotas"),
            )
    where = survey.location_of("quotas")
    if total < goal:
        diagnostics.note(
            f"Soft launch: the quotas of survey {survey.name!r} sum to {total}, below "
            f"completes_required {goal}",
            where,
        )
    elif total > goal:
        diagnostics.note(
            f"Quota flexibility: the quotas of survey {survey.name!r} sum to {total}, above "
            f"completes_required {goal}",
            where,
        )


def check_groups(
    state: DesiredState, diagnostics: Diagnostics, unbuilt: frozenset[str] = frozenset()
) -> None:
    """Exclusion groups name Survey manifests, no recontact survey, unique references.

    `unbuilt` holds names of Survey manifests that exist but failed the schema, and of
    documents whose kind was refused: a group naming one of them is not reported again.
    """
    refs: dict[str, ExclusionGroup] = {}
    told: set[str] = set()  # programs whose `exclusion.ref` was found to repeat a reference
    for group in state.groups.values():
        ref_line = group.field_locations.get("buyer_surveygroup_ref", group.location)
        if group.buyer_surveygroup_ref in UNADDRESSABLE:
            diagnostics.error(
                f"buyer_surveygroup_ref {group.buyer_surveygroup_ref!r} of exclusion group "
                f"{group.name!r} cannot be used: the group's URL path carries it, where it "
                "would name the list of groups itself; choose another",
                ref_line,
            )
        other = refs.get(group.buyer_surveygroup_ref)
        if other is not None and _one_programs(group, other):
            if group.member.program not in told:
                told.add(group.member.program)
                _program_ref_taken_twice(group, other, ref_line, diagnostics)
        elif other is not None:
            diagnostics.error(
                f"buyer_surveygroup_ref {group.buyer_surveygroup_ref!r} of exclusion group "
                f"{group.name!r} is already used by exclusion group {other.name!r}",
                ref_line,
            )
        else:
            refs[group.buyer_surveygroup_ref] = group
        _group_members(group, state, diagnostics, unbuilt)


def _one_programs(group: ExclusionGroup, other: ExclusionGroup) -> bool:
    """Whether both groups were made by one program's `exclusion` (the same line of `ref`)."""
    return (
        group.member is not None
        and other.member is not None
        and group.member.program == other.member.program
    )


def _program_ref_taken_twice(
    group: ExclusionGroup, other: ExclusionGroup, ref_line: Location, diagnostics: Diagnostics
) -> None:
    """The error of a program's `exclusion.ref` that gives two of its groups one reference,
    at its line, once per program (the caller sees to it): the template lacks {locale} or
    {wave}, and every market or wave it fails would otherwise repeat it, each time naming two
    other members."""
    program = group.member.program
    diagnostics.error(
        f"exclusion.ref of program {program!r} gives its groups {other.name!r} and "
        f"{group.name!r} the same buyer_surveygroup_ref {group.buyer_surveygroup_ref!r}; a "
        "reference is unique, so the ref needs {locale} and {wave} in it",
        ref_line,
    )


def _group_members(
    group: ExclusionGroup, state: DesiredState, diagnostics: Diagnostics, unbuilt: frozenset[str]
) -> None:
    listed: set[str] = set()
    for index, name in enumerate(group.surveys):
        where = group.field_locations.get(f"surveys[{index}]", group.location)
        if name in listed:
            diagnostics.error(f"Exclusion group {group.name!r} lists survey {name!r} twice", where)
        listed.add(name)
        survey = state.surveys.get(name)
        if survey is None:
            if name not in unbuilt:
                diagnostics.error(_not_a_survey(group, name, state), where)
        elif survey.settings.get("incl_excl") == RECONTACT:
            diagnostics.error(
                f"Exclusion group {group.name!r} cannot hold survey {name!r}: it is a recontact "
                "survey (incl_excl 1)",
                where,
            )


def _not_a_survey(group: ExclusionGroup, name: str, state: DesiredState) -> str:
    """Why a name in a group's `surveys` is none of the surveys the manifests make. A program's
    name stands for many surveys, and a group holds surveys: its members are named instead."""
    members = sorted(n for n in state.surveys if (m := member_of(n)) and m.program == name)
    if members:
        return (
            f"Exclusion group {group.name!r} names {name!r}, which is a SurveyProgram: a group "
            f"holds surveys, so name the program's members it should hold, such as "
            f"{members[0]!r}"
        )
    hint = suggest(name, state.surveys) or (
        # `surveyctl validate surveys/coffee.yaml` of a group whose other survey is in
        # another file: the survey exists, only not among the files this run was given.
        ": remove it from the group if its manifest is gone, or name the file that defines it "
        "too (without paths, the `manifests:` of surveyctl.yaml are read)"
    )
    return (
        f"Exclusion group {group.name!r} names survey {name!r}, which is neither a Survey "
        f"manifest nor a program member in the files read{hint}"
    )
