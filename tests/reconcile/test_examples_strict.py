"""The repository's examples applied to a sandbox served --strict: every request surveyctl
sends for them (survey creates with qualifications, quotas, QLC and QBP, a recontact survey, a
program's waves, exclusion groups, and the quota PUTs of a changed share) is one the API
defines, so a stray field or query parameter in any of them fails here."""

from __future__ import annotations

import shutil
from pathlib import Path

import pytest

EXAMPLES = Path(__file__).resolve().parents[2] / "examples"
TRACKER = Path("examples") / "surveys" / "brand-tracker-us.yaml"


@pytest.fixture
def sandbox(strict_sandbox):
    """The sandbox of these tests (and of `project`): the session's strict one."""
    return strict_sandbox


@pytest.fixture
def examples(project) -> Path:
    """A copy of the examples in the project folder."""
    shutil.copytree(EXAMPLES, project / "examples", ignore=shutil.ignore_patterns("ci"))
    return project / "examples"


def test_every_example_applies_to_a_strict_sandbox(examples, run_cli):
    # The exclusion groups' references are unique across the marketplace: only this test
    # applies the examples' groups to the session's strict sandbox.
    applied = run_cli("apply", "examples", "--auto-approve")
    assert applied.exit_code == 0, applied.stderr
    assert "0 changed, 0 destroyed" in applied.stdout
    assert run_cli("plan", "examples", "--detailed-exitcode").exit_code == 0


def test_a_changed_share_of_an_example_goes_out_as_quota_puts_a_strict_sandbox_takes(
    examples, project, run_cli
):
    surveys = "examples/surveys"
    assert run_cli("apply", surveys, "--auto-approve").exit_code == 0
    text = (project / TRACKER).read_text(encoding="utf-8")
    (project / TRACKER).write_text(text.replace("0.48", "0.40").replace("0.52", "0.60"))
    applied = run_cli("apply", surveys, "--auto-approve")
    assert applied.exit_code == 0, applied.stderr
    assert "quota-update ok" in applied.stderr + applied.stdout
    assert run_cli("plan", surveys, "--detailed-exitcode").exit_code == 0
