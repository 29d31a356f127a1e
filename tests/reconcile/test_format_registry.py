"""The registry of output formats: a format defined here alone is offered by plan, show and
apply, and renders through the same code as text, json and markdown; nothing in the core or
the CLI names it."""

from __future__ import annotations

from pathlib import Path

import pytest

from surveyctl.render import formats

from .conftest import Manifests, survey_manifest, survey_title


def _plan_line(plan, color: bool) -> str:
    return " ".join(f"{r.action}:{r.address}" for r in plan.resources if r.is_change) + "\n"


def _report_line(report, color: bool) -> str:
    done = ",".join(f"{row['name']}={row['id']}" for row in report.rows())
    return f"{report.verdict} [{done}]\n"


@pytest.fixture
def brief_format():
    formats.register(formats.Format("brief", _plan_line, apply=_report_line))
    yield
    formats.unregister("brief")


@pytest.fixture
def manifests(project: Path) -> Manifests:
    written = Manifests(project)
    written.write(survey_manifest("tracker"))
    return written


def test_plan_renders_in_a_format_registered_by_a_test(brief_format, run_cli, manifests):
    result = run_cli("plan", "manifests", "--format", "brief")
    assert result.exit_code == 0, result.stderr
    assert result.stdout == "create:Survey/tracker\n"


def test_show_renders_a_saved_plan_in_a_format_registered_by_a_test(
    brief_format, run_cli, manifests
):
    assert run_cli("plan", "manifests", "--out", "change.plan").exit_code == 0
    result = run_cli("show", "change.plan", "--format", "brief")
    assert result.exit_code == 0, result.stderr
    assert result.stdout == "create:Survey/tracker\n"


def test_apply_reports_in_a_format_registered_by_a_test(brief_format, run_cli, manifests, api):
    result = run_cli("apply", "manifests", "--auto-approve", "--format", "brief")
    assert result.exit_code == 0, result.stderr
    assert result.stdout.startswith("create:Survey/tracker\ncomplete [tracker=")
    survey_id = int(result.stdout.rsplit("=", 1)[1].rstrip("]\n"))
    assert api.get_survey(survey_id)["survey_title"] == survey_title("tracker")


def test_apply_does_not_offer_a_format_without_a_report(run_cli, manifests):
    result = run_cli("apply", "manifests", "--auto-approve", "--format", "markdown")
    assert result.exit_code == 2
    assert "'markdown' is not one of 'text', 'json'" in result.stderr


def test_a_format_nobody_registered_is_refused_naming_the_known_ones(run_cli, manifests):
    result = run_cli("plan", "manifests", "--format", "brief")
    assert result.exit_code == 2
    assert "'brief' is not one of 'text', 'json', 'markdown'" in result.stderr
