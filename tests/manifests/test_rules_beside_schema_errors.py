"""A Survey that fails the schema still gets the rule findings of its valid parts, so that one
`surveyctl validate` shows them all; a field a rule reads that is itself ill typed gets its
schema error alone, not a rule's guess at what it meant."""

from __future__ import annotations

import pytest

GENDER = '[{qualification_code: 211, condition_codes: ["111"]}]'


def quotas(*ids: str, count: int = 50) -> str:
    lines = [
        f"  - {{buyer_quota_id: {i}, required_count: {count}, criteria: {GENDER}}}" for i in ids
    ]
    return "quotas:\n" + "\n".join(lines) + "\n"


def _findings(diagnostics, severities=("error", "warning")) -> list[tuple[str, str, int]]:
    return [
        (d.severity, d.summary, d.location.line)
        for d in diagnostics.sorted()
        if d.severity in severities
    ]


@pytest.mark.parametrize(
    "extra",
    [
        pytest.param(quotas("men", "men"), id="a quota id used twice"),
        pytest.param("qualifications:\n  - {qualification_code: 211}\n", id="no targeting"),
        pytest.param("qlc: {enable: true, multiple_quotas: {enable: true}}\n", id="qlc, no quota"),
        pytest.param("qlc: {enable: true}\n" + quotas("a", count=100), id="qlc, no multiple"),
        pytest.param(
            "qlc: {enable: false, multiple_quotas: {count_by_quota: true}}\n" + quotas("a"),
            id="a qlc option while qlc is off",
        ),
        pytest.param("qbp: {enable: true}\n", id="qbp, no quota"),
        pytest.param(
            "qbp: {enable: true, quota_ids: [womn]}\n" + quotas("men", "women"),
            id="qbp naming no quota",
        ),
        pytest.param("incl_excl: 1\nbuyer_surveygroup_ref: trackers\n", id="recontact in a group"),
        pytest.param("", id="live_url without the transaction placeholder"),
    ],
)
def test_a_schema_error_elsewhere_keeps_the_rule_findings(check, survey_yaml, line_of, extra):
    valid = survey_yaml(extra)
    if not extra:
        valid = valid.replace("?tid=[%%transaction_id%%]", "")
    *_, alone = check(valid)
    text = valid.replace("  field_time: 7\n", "  field_time: seven\n")
    *_, beside = check(text, name="schema.yaml")
    schema_error, *rest = _findings(beside)
    assert schema_error[2] == line_of(text, "field_time")
    assert _findings(alone) != []
    assert rest == _findings(alone)


@pytest.mark.parametrize(
    ("extra", "field"),
    [
        pytest.param("qbp: {enable: 'yes', quota_ids: [nope]}\n", "qbp.enable", id="qbp.enable"),
        pytest.param(
            "qbp: {enable: true, quota_ids: [1]}\n" + quotas("men"),
            "qbp.quota_ids[0]",
            id="qbp.quota_ids",
        ),
        pytest.param(
            "qlc: {enable: true, multiple_quotas: {enable: 'yes'}}\n" + quotas("a", count=100),
            "qlc.multiple_quotas.enable",
            id="qlc.multiple_quotas.enable",
        ),
        pytest.param(
            "incl_excl: true\nbuyer_surveygroup_ref: trackers\n", "incl_excl", id="incl_excl"
        ),
    ],
)
def test_an_ill_typed_field_a_rule_reads_gets_its_schema_error_alone(
    check, survey_yaml, extra, field
):
    _, errors, _ = check(survey_yaml(extra))
    (error,) = errors
    assert error.summary.startswith(f"spec.{field} must be ")
