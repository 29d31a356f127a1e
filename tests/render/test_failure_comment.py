"""The comment of a plan that could not be made: what failed, within GitHub's limit."""

from __future__ import annotations

import re

from ..reconcile.conftest import survey_manifest


def test_a_failure_comment_of_hundreds_of_findings_fits_a_github_comment(run_cli, manifests):
    from surveyctl.render import markdown

    # A schema change or a bad merge can break every manifest at once: one finding each.
    for n in range(500):
        bad = survey_manifest(f"s-{n:03d}", expected_ir="x")
        del bad["spec"]["live_url"]
        manifests.write(bad)
    result = run_cli("plan", "manifests", "--format", "markdown")
    assert result.exit_code == 1
    assert len(result.stdout) <= markdown.COMMENT_LIMIT
    assert result.stdout.rstrip().endswith(markdown.MARKER)


def test_findings_left_out_of_a_failure_comment_are_counted(run_cli, manifests):
    for n in range(500):
        bad = survey_manifest(f"s-{n:03d}", expected_ir="x")
        del bad["spec"]["live_url"]
        manifests.write(bad)
    comment = run_cli("plan", "manifests", "--format", "markdown").stdout
    shown = len(re.findall(r"^- manifests/s-\d+\.yaml", comment, re.M))
    assert 0 < shown < 1000
    assert f"- *{1000 - shown} more finding(s) are not shown" in comment
    assert "`surveyctl validate` shows them all" in comment
