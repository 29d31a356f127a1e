"""Markdown for pull requests: diff blocks GitHub colours, one table, errors before details."""

from __future__ import annotations

import re

from .conftest import survey_manifest, survey_title


def _diff_blocks(markdown: str) -> list[list[str]]:
    return [
        block.splitlines()
        for block in re.findall(r"^```diff\n(.*?)^```$", markdown, re.MULTILINE | re.DOTALL)
    ]


def _changed_plan(run_cli, manifests) -> str:
    """A plan with an update of `kept` and a create of `added`, as markdown."""
    manifests.write(survey_manifest("kept"))
    assert run_cli("apply", "manifests", "--auto-approve").exit_code == 0
    manifests.write(survey_manifest("kept", offer_price=3.0, survey_title="Kept, renamed"))
    manifests.write(survey_manifest("added"))
    result = run_cli("plan", "manifests", "--format", "markdown")
    assert result.exit_code == 0, result.stderr
    return result.stdout


def test_changes_are_in_diff_blocks_with_the_marker_in_column_0(run_cli, manifests):
    markdown = _changed_plan(run_cli, manifests)
    blocks = _diff_blocks(markdown)
    assert len(blocks) == 2
    for block in blocks:
        assert all(line[0] in "+-! " for line in block), block
    added, kept = blocks
    assert added[0] == "+ Survey/added will be created"
    assert "+   quotas[male]: 100 completes; Gender: Male (111)" in added
    assert kept[0].startswith("! Survey/kept (ps_survey_id ")
    assert f'!   survey_title: "{survey_title("kept")}" -> "Kept, renamed"' in kept


def test_one_summary_table_names_resource_action_fields_and_spend(run_cli, manifests):
    markdown = _changed_plan(run_cli, manifests)
    assert markdown.count("| resource | action | fields changed | spend change |") == 1
    assert "| `Survey/added` | create | – | +$500.00 |" in markdown
    assert "| `Survey/kept` | update | survey_title, offer_price | +$100.00 |" in markdown


def test_the_total_spend_change_appears_once(run_cli, manifests):
    markdown = _changed_plan(run_cli, manifests)
    assert markdown.count("Estimated spend") == 1
    assert "$500.00 -> $1,100.00 (+$600.00)" in markdown
    assert "  spend:" not in markdown  # no per-resource spend lines in the diff blocks


def test_errors_and_notes_come_before_the_details(run_cli, manifests, project, other_buyer_api):
    manifests.write(survey_manifest("tracker"))
    manifests.write(survey_manifest("other"))
    assert run_cli("apply", "manifests", "--auto-approve").exit_code == 0
    # The state now names a survey of another buyer: its live body cannot be read (403),
    # which leaves it out of the plan with a warning.
    foreign = other_buyer_api.create_survey(survey_manifest("x")["spec"])["ps_survey_id"]
    state = project / ".surveyctl" / "state" / "local.json"
    text = state.read_text(encoding="utf-8")
    own = re.search(r'"Survey/tracker": \{"ps_survey_id": (\d+)', text).group(1)
    state.write_text(text.replace(f'"ps_survey_id": {own}', f'"ps_survey_id": {foreign}'))
    manifests.write(survey_manifest("other", offer_price=3.0))
    result = run_cli("plan", "manifests", "--format", "markdown")
    assert result.exit_code == 1
    markdown = result.stdout
    assert "**Warnings and notes:**" in markdown
    assert "- warning: `Survey/tracker`: cannot read the live survey" in markdown
    assert "could not be read" in markdown.split("\n")[2]  # said in the summary line too
    assert markdown.index("**Warnings") < markdown.index("| resource |") < markdown.index("```diff")


def test_manifest_errors_still_produce_a_comment_that_says_what_failed(run_cli, manifests):
    bad = survey_manifest("tracker")
    del bad["spec"]["live_url"]
    manifests.write(bad)
    result = run_cli("plan", "manifests", "--format", "markdown")
    assert result.exit_code == 1
    assert result.stdout.startswith("### surveyctl plan: `local` failed")
    assert "**Nothing was planned:** 1 error(s) in the manifests" in result.stdout
    assert re.search(r"^- .*tracker\.yaml:\d+:\d+: error: .*live_url", result.stdout, re.M)


def test_an_unreadable_state_still_produces_a_comment(run_cli, manifests, project):
    manifests.write(survey_manifest("tracker"))
    state = project / ".surveyctl" / "state" / "local.json"
    state.parent.mkdir(parents=True)
    state.write_text("{not json", encoding="utf-8")
    result = run_cli("plan", "manifests", "--format", "markdown")
    assert result.exit_code == 1
    assert result.stdout.startswith("### surveyctl plan: `local` failed")
    assert "local.json" in result.stdout
    assert "Traceback" not in result.stdout + result.stderr


def test_a_plan_without_changes_says_so_without_a_table(run_cli, manifests):
    manifests.write(survey_manifest("tracker"))
    assert run_cli("apply", "manifests", "--auto-approve").exit_code == 0
    markdown = run_cli("plan", "manifests", "--format", "markdown").stdout
    assert "**No changes." in markdown
    assert "| resource |" not in markdown
    assert "```diff" not in markdown


def test_markdown_plan_names_the_answers(run_cli, manifests):
    manifests.write(survey_manifest("tracker"))
    result = run_cli("plan", "manifests", "--format", "markdown")
    assert "+   qualifications[Gender].answers: Male (111), Female (112)" in result.stdout


def test_a_huge_plan_is_cut_to_fit_a_github_comment_and_says_so():
    # 65,536 characters need hundreds of surveys; built directly rather than planned.
    from surveyctl.reconcile.plan import Plan, ResourceChange
    from surveyctl.render import markdown

    body = survey_manifest("x", buyer_message="m" * 400)["spec"]
    plan = Plan("local", "lineage", 1)
    plan.resources = [
        ResourceChange("Survey", f"survey-{n}", "create", body=body) for n in range(300)
    ]
    comment = markdown.render(plan)
    assert len(comment) <= markdown.COMMENT_LIMIT
    assert re.search(r"\*\d+ more resource\(s\) are not shown", comment)
    assert comment.count("| `Survey/survey-") == 300  # the table still lists every one


def test_a_plan_of_thousands_of_resources_still_fits_with_a_shortened_table():
    from surveyctl.reconcile.plan import Plan, ResourceChange
    from surveyctl.render import markdown

    plan = Plan("local", "lineage", 1)
    plan.resources = [
        ResourceChange("Survey", f"survey-{n}", "create", body={"survey_title": "t"})
        for n in range(5000)
    ]
    comment = markdown.render(plan)
    assert len(comment) <= markdown.COMMENT_LIMIT
    assert re.search(r"^\| \*\d+ more\* \|", comment, re.M)


def _plan_with_notes(count: int, severity: str = "error"):
    """A plan whose every create is withheld by a note, as when a CI job reads an empty or
    wrong state and each manifest meets its survey on the service as a twin."""
    from surveyctl.reconcile.plan import Note, Plan, ResourceChange

    plan = Plan("production", "lineage", 1)
    plan.resources = [ResourceChange("Survey", f"s-{n:03d}", "create", body={}) for n in range(5)]
    message = (
        "exists on the service as survey 10002 (same title and locale) but is not in state; "
        "adopt it with `surveyctl import 10002 --name s-000`, or plan and apply with --adopt "
        "(records it, then plans the differences as updates); --allow-duplicate creates "
        "another one beside it"
    )
    plan.notes = [Note(severity, f"Survey/s-{n:03d}", message) for n in range(count)]
    return plan


def test_a_plan_with_hundreds_of_notes_still_fits_a_github_comment():
    from surveyctl.render import markdown

    comment = markdown.render(_plan_with_notes(500))
    assert len(comment) <= markdown.COMMENT_LIMIT
    assert comment.rstrip().endswith(markdown.MARKER)


def test_notes_left_out_of_a_comment_are_counted():
    from surveyctl.render import markdown

    comment = markdown.render(_plan_with_notes(500))
    shown = comment.count("- `Survey/s-")
    assert f"*{500 - shown} more error(s) are not shown" in comment


def test_the_table_still_fits_when_the_notes_are_cut():
    from surveyctl.render import markdown

    comment = markdown.render(_plan_with_notes(500))
    assert "| `Survey/s-004` | create |" in comment
