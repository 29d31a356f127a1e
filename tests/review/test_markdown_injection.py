"""A plan's pull-request comment is posted by CI under its own name, and what it quotes comes
from the pull request (field names, file names, titles) and from the service: quoted text is
shown as written, never taken as markdown, HTML or a mention."""

from __future__ import annotations

from surveyctl.reconcile.plan import Note, Plan
from surveyctl.render.markdown import render, render_failure

from .conftest import survey_manifest

HOSTILE = "![x](https://evil.example/p.png) @octocat **APPROVED** <img src=x>"


def test_an_unknown_field_in_a_failed_plan_comment_is_shown_not_rendered(run_cli, manifests):
    bad = survey_manifest("tracker")
    bad["spec"][HOSTILE] = 1
    manifests.write(bad)
    result = run_cli("plan", "manifests", "--format", "markdown")
    assert result.exit_code == 1
    (line,) = [line for line in result.stdout.splitlines() if "unknown field" in line]
    assert line.endswith(
        "unknown field '\\!\\[x\\](https://evil.example/p.png) `@octocat` \\*\\*APPROVED\\*\\* "
        "\\<img src=x\\>'."
    )


def test_a_note_quoting_a_mention_notifies_nobody(project):
    plan = Plan(environment="staging", state_lineage="l", state_serial=1)
    plan.notes.append(Note("warning", "Survey/x", "quota '@org/team' will close"))
    markdown = render(plan)
    assert "- warning: `Survey/x`: quota '`@org/team`' will close" in markdown


def test_a_note_keeps_its_own_code_spans_and_file_names_with_underscores(project):
    plan = Plan(environment="staging", state_lineage="l", state_serial=1)
    message = "adopt it with `surveyctl import 10 --name x_y` (set live_url)"
    plan.notes.append(Note("error", "Survey/x_y", message, "surveys/x_y.yaml:3:1"))
    markdown = render(plan)
    assert f"- `Survey/x_y`: {message} (surveys/x_y.yaml:3:1)" in markdown


def test_a_note_with_a_line_break_and_an_escape_stays_one_list_item(project):
    plan = Plan(environment="staging", state_lineage="l", state_serial=1)
    plan.notes.append(Note("note", "Survey/x", "first\n\n# Heading\x1b[31m"))
    markdown = render(plan)
    # shown as `first # Heading\u001b[31m`: the escape's backslash is escaped in turn
    assert "- note: `Survey/x`: first \\# Heading\\\\u001b\\[31m" in markdown
    assert "\n# Heading" not in markdown


def test_an_environment_name_holding_backticks_stays_one_code_span_in_the_heading(project):
    name = "a` <img src=x> @octocat **B** `"
    failed = render_failure(name, "the state cannot be read")
    planned = render(Plan(environment=name, state_lineage="l", state_serial=1))
    span = "`` a` <img src=x> @octocat **B** ` ``"
    assert failed.splitlines()[0] == f"### surveyctl plan: {span} failed"
    assert planned.splitlines()[0] == f"### surveyctl plan: {span}"
