"""Checks and notes of the planner: the spec's rules checked before any write, and what a
reviewer should know (soft launch, quota flexibility, quotas that will close, closed surveys
left as they are, spend)."""

from __future__ import annotations

from collections.abc import Callable

from surveyctl.fields import priced_individually
from surveyctl.money import cents, dollars
from surveyctl.reconcile.plan import FieldChange, Note, Spend
from surveyctl.statuses import CLOSED, DRAFT, survey_status_name


def spend(body: dict | None) -> float | None:
    """offer_price x completes_required, in US dollars (public facts), to the cent; None when
    unpriced."""
    if not body or body.get("offer_price") is None or body.get("completes_required") is None:
        return None
    price = dollars(body["offer_price"])
    try:
        goal = int(body["completes_required"])
    except (TypeError, ValueError, OverflowError):  # a live survey's goal that is no number
        return None
    return None if price is None else cents(price * goal)


def survey_spend(before: dict | None, after: dict | None) -> Spend:
    return Spend(before=spend(before), after=spend(after))


def quota_balance(address: str, body: dict, location: str | None) -> list[Note]:
    """Soft launch (quotas sum below the goal) or quota flexibility (above), spec 1.3/1.4."""
    quotas = body.get("quotas") or []
    goal = body.get("completes_required")
    if not quotas or goal is None:
        return []
    total = sum(int(q.get("required_count") or 0) for q in quotas)
    if total < goal:
        text = f"soft launch: the quotas sum to {total}, below completes_required {goal}"
    elif total > goal:
        text = f"quota flexibility: the quotas sum to {total}, above completes_required {goal}"
    else:
        return []
    return [Note("note", address, text, location)]


def survey_notes(address: str, body: dict, location_of: Callable[[str], str | None]) -> list[Note]:
    """What a new or changed survey's quotas say of its goal (`quota_balance`, at the line of
    `quotas`) and of its estimated spend (`priced_apart`, at the line of `qbp`), each at the
    line of its field as `validate` points there (`location_of`)."""
    return quota_balance(address, body, location_of("quotas")) + priced_apart(
        address, body, location_of("qbp")
    )


def priced_apart(address: str, body: dict, location: str | None) -> list[Note]:
    """Quotas priced individually (QBP, spec 2.6) are paid at prices the API does not show
    (rule 5), so the estimate, offer_price x completes_required, counts their completes at
    offer_price and the max_spend_increase guard cannot see what they add: say so, naming
    them, where a reviewer reads the spend."""
    quota_ids = priced_individually(body)
    if not quota_ids:
        return []
    one = len(quota_ids) == 1
    named = ("quota " if one else "quotas ") + ", ".join(quota_ids)
    its = "its" if one else "their"
    text = (
        f"{named} {'is' if one else 'are'} priced individually (qbp); the API does not show "
        f"{its} price, so {its} completes are counted at offer_price in the estimated spend "
        "and in max_spend_increase"
    )
    return [Note("note", address, text, location)]


def frozen_fields(
    address: str,
    status: int | None,
    changes: list[FieldChange],
    location_of: Callable[[str], str | None],
) -> list[Note]:
    """QLC is frozen once a survey has been live (spec 2.7 rule 3); QBP changes only in draft
    (public facts, code 1007). Both would be refused by the service: block them here, each at
    the line of its field (`location_of`)."""
    if status is None or status == DRAFT:
        return []
    state = f"{survey_status_name(status)} ({status})"
    notes = []
    touched = {change.field for change in changes}
    if "qlc" in touched:
        notes.append(
            Note(
                "error",
                address,
                f"QLC cannot change once a survey has been live; this survey is {state}",
                location_of("qlc"),
            )
        )
    if "qbp" in touched:
        notes.append(
            Note(
                "error",
                address,
                f"QBP can change only while a survey is a draft; this survey is {state}",
                location_of("qbp"),
            )
        )
    return notes


def is_closed(live: dict | None) -> bool:
    """A closed survey (44) cannot change: the service refuses its PUT and every quota PUT
    (400, code 1010). Only a DELETE is still taken (docs/api-assumptions.md)."""
    return bool(live) and live.get("ps_survey_status") == CLOSED


def closed_survey(
    address: str,
    survey_id: object,
    changes: list[FieldChange],
    location: str | None,
    member: bool,
) -> Note:
    """What a plan says of a closed survey whose manifest now differs from it. The change is
    never planned (the service would refuse it). A program member is a finished wave: it is
    left as it is, a note, and the program's change goes to its open waves. A Survey manifest
    describes that one survey, which can never become what it says: an error, so apply
    refuses before any write until the manifest says what the survey is again."""
    fields = _differ(sorted({change.field for change in changes}))
    if member:
        return Note(
            "note",
            address,
            f"survey {survey_id} is closed and cannot change: this finished wave is left as "
            f"it is ({fields} from the program's), and the change applies to the "
            "program's open waves only",
            location,
        )
    return Note(
        "error",
        address,
        f"survey {survey_id} is closed and cannot change ({fields} from the "
        "manifest), and the marketplace refuses any update of it: revert the manifest to "
        "what the survey is, or give the manifest a new name to create a new survey",
        location,
    )


def _differ(fields: list[str]) -> str:
    """`expected_loi differs`, `expected_loi, field_time differ`: a note names one or more."""
    return ", ".join(fields) + (" differs" if len(fields) == 1 else " differ")


def closing_quotas(
    address: str, body: dict, performance: list[dict], location: str | None
) -> list[Note]:
    """A required_count at or below a quota's completes closes that quota (spec 2.4 rule 3)."""
    fielded = {row.get("buyer_quota_id"): row.get("completes_fielded") or 0 for row in performance}
    notes = []
    for quota in body.get("quotas") or []:
        quota_id = quota.get("buyer_quota_id")
        completes = fielded.get(quota_id)
        # At 0 completes too: a required_count of 0 closes the quota (0 <= 0, spec 2.4).
        if completes is not None and quota.get("required_count", 0) <= completes:
            notes.append(
                Note(
                    "warning",
                    address,
                    f"quota {quota_id} will close: required_count {quota.get('required_count')} "
                    f"is at or below its {completes} completes, so it gets no more traffic",
                    location,
                )
            )
    return notes


def lowered_quotas(changes: list[FieldChange]) -> bool:
    """True when a change lowers some quota's required_count (worth a performance read)."""
    return any(
        change.path.startswith("quotas[")
        and change.path.endswith("].required_count")
        and isinstance(change.old, int | float)
        and isinstance(change.new, int | float)
        and change.new < change.old
        for change in changes
    )


def group_refs(body: dict | None) -> set[str]:
    """The exclusion groups a survey body names: `buyer_surveygroup_ref` and each of
    `buyer_surveygroup_refs`."""
    body = body or {}
    refs = body.get("buyer_surveygroup_refs")
    named = {str(ref) for ref in refs if ref} if isinstance(refs, list) else set()
    if body.get("buyer_surveygroup_ref"):
        named.add(str(body["buyer_surveygroup_ref"]))
    return named


def unmet_membership(
    address: str, desired: dict, live: dict, last_applied: dict | None, location: str | None
) -> Note | None:
    """A warning when a Survey manifest's group references say other than the live survey:
    an update carries the live membership over (reconcile/merge.py, rule 6), so the manifest's
    references join groups only when the survey is created, and a plan would otherwise say
    the survey matches its manifest."""
    wanted, live_refs = group_refs(desired), group_refs(live)
    missing = sorted(wanted - live_refs)
    dropped = sorted((group_refs(last_applied) - wanted) & live_refs)
    if not missing and not dropped:
        return None
    said = []
    if missing:
        said.append(f"puts the survey in group(s) {', '.join(missing)}, which it is not in")
    if dropped:
        said.append(f"no longer names group(s) {', '.join(dropped)}, which it is still in")
    return Note(
        "warning",
        address,
        f"the manifest {', and '.join(said)}; apply does not change this: an update keeps a "
        "survey's group membership as it is live (buyer_surveygroup_ref(s) join groups only "
        "when a survey is created), so manage the membership with an ExclusionGroup manifest "
        "or make the manifest name the groups the survey is in",
        location,
    )
