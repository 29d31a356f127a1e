"""Quotas priced individually (QBP): the plan says the estimated spend and the spend guard
count their completes at offer_price, since the API does not show their price."""

from __future__ import annotations

from .conftest import survey_manifest

QBP_MALE = {"enable": True, "quota_ids": ["male"]}
SAID = (
    "note: Survey/tracker: quota male is priced individually (qbp); the API does not show its "
    "price, so its completes are counted at offer_price in the estimated spend and in "
    "max_spend_increase (manifests/tracker.yaml:{line}:3)"
)


def _said(manifests) -> str:
    """SAID at the line of the manifest's `qbp:`, the field the note is about."""
    text = (manifests.folder / "tracker.yaml").read_text(encoding="utf-8")
    line = next(i for i, row in enumerate(text.splitlines(), 1) if row.strip() == "qbp:")
    return SAID.format(line=line)


def test_a_new_survey_with_a_quota_priced_individually_says_the_estimate_counts_it_at_offer_price(
    run_cli, manifests
):
    manifests.write(survey_manifest("tracker", qbp=QBP_MALE))
    result = run_cli("plan", "manifests")
    assert _said(manifests) in result.stdout


def test_a_note_of_quotas_priced_individually_names_each_of_them(run_cli, manifests):
    qbp = {"enable": True, "quota_ids": ["male", "female"]}
    manifests.write(survey_manifest("tracker", qbp=qbp))
    result = run_cli("plan", "manifests")
    assert "note: Survey/tracker: quotas male, female are priced individually (qbp)" in (
        result.stdout
    )


def test_a_survey_without_quota_based_pricing_has_no_such_note(run_cli, manifests):
    manifests.write(survey_manifest("tracker", qbp={"enable": False, "quota_ids": ["male"]}))
    result = run_cli("plan", "manifests")
    assert result.exit_code == 0, result.stdout + result.stderr
    assert "priced individually" not in result.stdout


def test_raising_the_offer_price_of_a_survey_with_a_quota_priced_individually_says_so(
    run_cli, manifests
):
    manifests.write(survey_manifest("tracker", qbp=QBP_MALE))
    assert run_cli("apply", "manifests", "--auto-approve").exit_code == 0
    manifests.write(survey_manifest("tracker", qbp=QBP_MALE, offer_price=3.0))
    result = run_cli("plan", "manifests")
    assert "1 to change" in result.stdout
    assert "note: Survey/tracker: quota male is priced individually (qbp)" in result.stdout


def test_a_change_that_leaves_the_spend_alone_does_not_repeat_the_note(run_cli, manifests):
    manifests.write(survey_manifest("tracker", qbp=QBP_MALE))
    assert run_cli("apply", "manifests", "--auto-approve").exit_code == 0
    manifests.write(survey_manifest("tracker", qbp=QBP_MALE, expected_loi=12))
    result = run_cli("plan", "manifests")
    assert "1 to change" in result.stdout
    assert "priced individually" not in result.stdout


def _applied_with_qbp(run_cli, manifests) -> None:
    manifests.write(survey_manifest("tracker", qbp=QBP_MALE))
    assert run_cli("apply", "manifests", "--auto-approve").exit_code == 0


def test_the_note_of_an_update_names_the_manifest_of_the_survey(run_cli, manifests):
    _applied_with_qbp(run_cli, manifests)
    manifests.write(survey_manifest("tracker", qbp=QBP_MALE, offer_price=3.0))
    result = run_cli("plan", "manifests")
    assert _said(manifests) in result.stdout


def test_raising_the_completes_required_of_a_survey_with_a_quota_priced_individually_says_so(
    run_cli, manifests
):
    _applied_with_qbp(run_cli, manifests)
    manifests.write(survey_manifest("tracker", qbp=QBP_MALE, completes_required=300))
    result = run_cli("plan", "manifests")
    assert "1 to change" in result.stdout
    assert _said(manifests) in result.stdout


def test_changing_the_quotas_of_a_survey_with_a_quota_priced_individually_says_so(
    run_cli, manifests
):
    _applied_with_qbp(run_cli, manifests)
    quotas = survey_manifest("tracker")["spec"]["quotas"]
    quotas[0]["required_count"] = 150
    manifests.write(survey_manifest("tracker", qbp=QBP_MALE, quotas=quotas))
    result = run_cli("plan", "manifests")
    assert "1 to change" in result.stdout
    assert _said(manifests) in result.stdout


def test_pricing_a_quota_individually_in_an_update_says_so(run_cli, manifests):
    manifests.write(survey_manifest("tracker"))
    assert run_cli("apply", "manifests", "--auto-approve").exit_code == 0
    manifests.write(survey_manifest("tracker", qbp=QBP_MALE))
    result = run_cli("plan", "manifests")
    assert "1 to change" in result.stdout
    assert _said(manifests) in result.stdout
