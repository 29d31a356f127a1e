"""What an apply says it did, in text for the log and in JSON for CI."""

from __future__ import annotations

import json

from surveyctl.reconcile.apply import INTERRUPTED, LOCK_LOST, ApplyResult, Outcome
from surveyctl.render import json as json_format
from surveyctl.render import text
from surveyctl.render.report import ApplyReport

from .plans import create, delete, plan, price, update

PLANNED = plan(create("new"), update("kept", price(2.5, 3.0)), delete("old"))


def _report(*outcomes: Outcome, **result) -> ApplyReport:
    return ApplyReport(PLANNED, ApplyResult(list(outcomes), **result))


def test_a_complete_apply_counts_what_it_added_changed_and_destroyed():
    done = [
        Outcome("Survey/new", "create", "done"),
        Outcome("Survey/new-2", "create", "done"),
        Outcome("Survey/kept", "quota-update", "done"),
        Outcome("Survey/old", "delete", "done"),
    ]
    assert text.render_apply(_report(*done)) == (
        "Apply complete! Resources: 2 added, 1 changed, 1 destroyed.\n"
    )


def test_a_write_the_service_refused_is_listed_with_its_answer():
    shown = text.render_apply(
        _report(
            Outcome("Survey/new", "create", "done"),
            Outcome("Survey/kept", "update", "failed", "400: offer_price too low"),
        )
    )
    assert shown.splitlines()[:2] == [
        "Apply incomplete: 1 done, 1 failed, 0 not attempted.",
        "  failed: Survey/kept (update): 400: offer_price too low",
    ]


def test_writes_an_interrupt_stopped_are_listed_once_as_not_attempted():
    shown = text.render_apply(
        _report(
            Outcome("Survey/new", "create", "done"),
            Outcome("Survey/kept", "update", "skipped", INTERRUPTED),
            interrupted=True,
        )
    )
    assert "  not attempted (interrupted): Survey/kept\n" in shown
    assert INTERRUPTED not in shown


def test_a_lock_lost_before_any_write_says_why_and_that_nothing_was_sent():
    why = "the state lock of 'staging' was taken over by ci-42"
    shown = text.render_apply(
        _report(
            Outcome("Survey/new", "create", "skipped", LOCK_LOST),
            halted=LOCK_LOST,
            halt_detail=why,
        )
    )
    assert f"  why: {why}\n" in shown
    assert "before its first write, so nothing was sent to the marketplace" in shown


def test_a_lock_lost_after_a_write_says_a_write_may_lack_its_record():
    shown = text.render_apply(
        _report(
            Outcome("Survey/new", "create", "done"),
            Outcome("Survey/kept", "update", "skipped", LOCK_LOST),
            halted=LOCK_LOST,
        )
    )
    assert "a write in flight may have reached the marketplace without a record" in shown


def test_the_json_report_orders_its_rows_as_the_plan_does():
    report = _report(
        Outcome("Survey/old", "delete", "done"),
        Outcome("Survey/new", "create", "done"),
    )
    rows = json.loads(json_format.render_apply(report))["resources"]
    assert [row["address"] for row in rows] == ["Survey/new", "Survey/old"]


def test_the_json_report_says_not_attempted_and_interrupted():
    report = _report(Outcome("Survey/kept", "update", "skipped", INTERRUPTED), interrupted=True)
    data = json.loads(json_format.render_apply(report))
    assert data["outcome"] == "interrupted"
    (row,) = data["resources"]
    assert (row["status"], row["interrupted"], row["id"]) == ("not attempted", True, 10001)


def test_the_json_report_counts_a_quota_update_as_changed_and_a_delete_as_destroyed():
    report = _report(
        Outcome("Survey/kept", "quota-update", "done"), Outcome("Survey/old", "delete", "done")
    )
    summary = json.loads(json_format.render_apply(report))["summary"]
    assert (summary["changed"], summary["destroyed"]) == (1, 1)


def test_the_json_report_says_what_halted_it():
    report = _report(halted=LOCK_LOST, halt_detail="the lock was taken over")
    assert json.loads(json_format.render_apply(report))["halted"] == "the lock was taken over"


def test_the_json_report_of_a_refresh_counts_what_it_recorded():
    report = ApplyReport(PLANNED, ApplyResult(), refreshed=2)
    data = json.loads(json_format.render_apply(report))
    assert (data["outcome"], data["refreshed"]) == ("refreshed", 2)
