"""The plan's last line over real HTTP: "No changes" only when nothing is pending, and a spend
that covers every managed survey."""

from __future__ import annotations

import json

from surveyctl.reconcile.normalise import update_body
from surveyctl.state import FileStateStore, SurveyRecord

from .conftest import survey_manifest

NO_CHANGES = "No changes."


def _store(project) -> FileStateStore:
    return FileStateStore(project / ".surveyctl" / "state" / "local.json")


def _applied(run_cli, manifests, *specs) -> None:
    for spec in specs:
        manifests.write(spec)
    applied = run_cli("apply", "manifests", "--auto-approve")
    assert applied.exit_code == 0, applied.stdout + applied.stderr


def _guarded(name: str) -> dict:
    manifest = survey_manifest(name)
    manifest["lifecycle"] = {"prevent_destroy": True}
    return manifest


def _last_line(result) -> str:
    return result.stdout.strip().splitlines()[-1]


def test_a_managed_resource_missing_from_the_manifests_is_named_in_the_summary(manifests, run_cli):
    _applied(run_cli, manifests, survey_manifest("tracker"), survey_manifest("other"))
    manifests.remove("other")
    result = run_cli("plan", "manifests")
    assert result.exit_code == 0
    assert NO_CHANGES not in result.stdout
    assert (
        "1 managed resource is not in the manifests; it is kept, use --destroy to delete it."
        in _last_line(result)
    )


def test_several_kept_resources_are_counted(manifests, run_cli):
    names = ("tracker", "one", "two")
    _applied(run_cli, manifests, *(survey_manifest(n) for n in names))
    manifests.remove("one")
    manifests.remove("two")
    result = run_cli("plan", "manifests")
    assert (
        "2 managed resources are not in the manifests; they are kept, use --destroy to "
        "delete them." in _last_line(result)
    )


def test_a_failed_live_read_is_not_no_changes(project, manifests, other_buyer_api, run_cli):
    _applied(run_cli, manifests, survey_manifest("tracker"))
    foreign = other_buyer_api.create_survey(survey_manifest("x")["spec"])["ps_survey_id"]
    manifests.write(survey_manifest("foreign"))
    _store(project).record("Survey/foreign", SurveyRecord(foreign, last_applied={}))
    result = run_cli("plan", "manifests")
    assert result.exit_code == 1
    assert NO_CHANGES not in result.stdout
    assert "1 managed resource could not be read" in _last_line(result)


def test_a_blocked_create_is_not_no_changes_and_exits_1(project, manifests, run_cli):
    _applied(run_cli, manifests, survey_manifest("tracker"))
    manifests.write(survey_manifest("lost"))
    _store(project).journal_create("Survey/lost", survey_manifest("lost")["spec"])
    result = run_cli("plan", "manifests")
    assert result.exit_code == 1
    assert NO_CHANGES not in result.stdout
    assert "1 create is blocked by an unresolved earlier attempt" in _last_line(result)


def _out_of_its_group_by_hand(project, manifests, api, unique, run_cli) -> None:
    """Survey/tracker applied into the group its manifest names, then taken out of it by hand:
    drift that the plan changes nothing of (an update keeps the live membership)."""
    ref = f"group-{unique}"
    group = {"buyer_surveygroup_ref": ref, "name": ref, "exclusion_period": 30}
    api.create_group({**group, "surveys_in_group": []})
    _applied(run_cli, manifests, survey_manifest("tracker", buyer_surveygroup_refs=[ref]))
    api.update_group(ref, {**group, "surveys_in_group": []})


def test_drift_without_a_change_is_not_no_changes(project, manifests, api, unique, run_cli):
    _out_of_its_group_by_hand(project, manifests, api, unique, run_cli)
    result = run_cli("plan", "manifests", "--detailed-exitcode")
    assert result.exit_code == 0  # apply has nothing to send
    assert NO_CHANGES not in result.stdout
    assert "Plan: 0 to add, 0 to change, 0 to destroy." in result.stdout
    assert "1 resource changed outside surveyctl since the last apply" in _last_line(result)


def test_a_value_changed_by_hand_as_the_manifest_now_says_is_not_no_changes(
    project, manifests, api, run_cli
):
    _applied(run_cli, manifests, survey_manifest("tracker"))
    survey_id = _store(project).load().survey("tracker").ps_survey_id
    api.update_survey(survey_id, {**update_body(api.get_survey(survey_id)), "offer_price": 4.0})
    manifests.write(survey_manifest("tracker", offer_price=4.0))  # the manifest agrees now
    result = run_cli("plan", "manifests", "--detailed-exitcode")
    assert result.exit_code == 2  # apply has a state write to make
    assert "Plan: 0 to add, 0 to change, 0 to destroy." in result.stdout
    assert (
        "1 resource is already as its manifest asks in fields the state does not record yet "
        "(see the notes); `surveyctl apply` records them, with no write of their own."
    ) in _last_line(result)


def test_drift_the_plan_overwrites_names_apply_as_a_way_out_too(project, manifests, api, run_cli):
    _applied(run_cli, manifests, survey_manifest("tracker"))
    survey_id = _store(project).load().survey("tracker").ps_survey_id
    api.update_survey(survey_id, {**update_body(api.get_survey(survey_id)), "offer_price": 4.0})
    result = run_cli("plan", "manifests")
    assert (
        "1 resource changed outside surveyctl since the last apply (! drift); `surveyctl apply` "
        "writes the manifests' values again, or `surveyctl apply --refresh-only` accepts the "
        "live values."
    ) in _last_line(result)


def test_drift_without_a_change_names_only_refresh_only(project, manifests, api, unique, run_cli):
    _out_of_its_group_by_hand(project, manifests, api, unique, run_cli)
    result = run_cli("plan", "manifests")
    assert "(! drift); `surveyctl apply --refresh-only` accepts" in _last_line(result)


def test_the_spend_covers_unchanged_changed_and_kept_surveys(manifests, run_cli):
    names = ("tracker", "steady", "old")
    _applied(run_cli, manifests, *(survey_manifest(n) for n in names))  # $500 each
    manifests.write(survey_manifest("tracker", offer_price=3.0))  # $600
    manifests.remove("old")
    result = run_cli("plan", "manifests")
    assert "Estimated spend: $1,500.00 -> $1,600.00 (+$100.00)." in _last_line(result)


def test_the_spend_is_the_same_with_and_without_destroy_when_nothing_is_destroyed(
    manifests, run_cli
):
    _applied(run_cli, manifests, survey_manifest("tracker"), _guarded("kept"))
    manifests.remove("kept")
    without = run_cli("plan", "manifests")
    with_destroy = run_cli("plan", "manifests", "--destroy")
    assert with_destroy.exit_code == 1  # prevent_destroy: nothing is destroyed
    assert "Estimated spend: $1,000.00 (unchanged)." in _last_line(without)
    assert "Estimated spend: $1,000.00 (unchanged)." in _last_line(with_destroy)


def test_a_destroy_starts_from_the_same_spend_as_the_plan_without_it(manifests, run_cli):
    _applied(run_cli, manifests, survey_manifest("tracker"), survey_manifest("old"))
    manifests.remove("old")
    destroyed = run_cli("plan", "manifests", "--destroy")
    assert "Plan: 0 to add, 0 to change, 1 to destroy." in destroyed.stdout
    assert "Estimated spend: $1,000.00 -> $500.00 (-$500.00)." in _last_line(destroyed)


def test_the_json_plan_lists_what_keeps_it_from_no_changes(manifests, run_cli):
    _applied(run_cli, manifests, survey_manifest("tracker"), survey_manifest("old"))
    manifests.remove("old")
    data = json.loads(run_cli("plan", "manifests", "--format", "json").stdout)
    assert data["kept"] == ["Survey/old"]
    assert data["unread"] == [] and data["blocked"] == [] and data["gone"] == []
    assert "not in the manifests" in data["summary"]["text"]
    assert data["spend_total"] == {"before": 1000.0, "after": 1000.0}


def test_a_saved_plan_keeps_what_it_kept(project, manifests, run_cli):
    _applied(run_cli, manifests, survey_manifest("tracker"), survey_manifest("old"))
    manifests.remove("old")
    manifests.write(survey_manifest("tracker", survey_title="Renamed"))
    assert run_cli("plan", "manifests", "--out", "change.plan").exit_code == 0
    applied = run_cli("apply", "change.plan")
    assert applied.exit_code == 0, applied.stdout + applied.stderr
    assert "not in the manifests; it is kept" in applied.stdout
    assert _store(project).load().survey("old") is not None


def test_everything_settled_says_no_changes(manifests, run_cli):
    _applied(run_cli, manifests, survey_manifest("tracker"))
    result = run_cli("plan", "manifests", "--detailed-exitcode")
    assert result.exit_code == 0
    assert _last_line(result).startswith(NO_CHANGES)


def test_a_plan_saved_before_these_fields_existed_still_applies(project, manifests, run_cli):
    from surveyctl.state import fingerprint

    _applied(run_cli, manifests, survey_manifest("tracker"))
    manifests.write(survey_manifest("tracker", survey_title="Renamed"))
    assert run_cli("plan", "manifests", "--out", "change.plan").exit_code == 0
    path = project / "change.plan"
    document = json.loads(path.read_text())
    for newer in ("kept", "unread", "blocked", "gone", "refresh_only"):
        del document["plan"][newer]
    document["checksum"] = fingerprint(document["plan"])
    path.write_text(json.dumps(document))
    applied = run_cli("apply", "change.plan")
    assert applied.exit_code == 0, applied.stdout + applied.stderr
    assert "Apply complete! Resources: 0 added, 1 changed, 0 destroyed." in applied.stdout


def test_a_spend_of_half_a_cent_is_rounded_up(manifests, run_cli):
    # $0.125 is half a cent over $0.12: rounded half up, not to the even cent ($0.12).
    manifests.write(survey_manifest("tracker", offer_price=0.125, completes_required=1))
    result = run_cli("plan", "manifests")
    assert "Estimated spend: $0.00 -> $0.13 (+$0.13)." in _last_line(result)


def test_a_change_of_spend_over_a_thousand_dollars_is_written_with_a_thousands_comma(
    manifests, run_cli
):
    _applied(run_cli, manifests, survey_manifest("tracker"))  # $500
    manifests.write(survey_manifest("tracker", offer_price=8.0))  # $1,600
    result = run_cli("plan", "manifests")
    assert "Estimated spend: $500.00 -> $1,600.00 (+$1,100.00)." in _last_line(result)


def test_the_spend_of_a_price_with_more_decimals_than_cents_is_rounded_exactly(manifests, run_cli):
    # 7 x $0.105 is $0.735, $0.74 to the cent; as floats the product is 0.7349999... ($0.73).
    manifests.write(survey_manifest("tracker", offer_price=0.105, completes_required=7))
    result = run_cli("plan", "manifests")
    assert "spend: n/a -> $0.74" in result.stdout
    assert "Estimated spend: $0.00 -> $0.74 (+$0.74)." in _last_line(result)
