"""Workflow commands: init, show, fmt, --target, and the pre-commit hooks."""

from __future__ import annotations

import json
import os
import re
import shlex
from pathlib import Path

import pytest
import yaml

from surveyctl.config import load_config

from .conftest import survey_manifest

REPOSITORY = Path(__file__).resolve().parents[2]


# -- init ------------------------------------------------------------------------------------


def test_init_writes_config_gitignore_example_and_the_ci_workflows(run_cli, project):
    result = run_cli("init", "fresh")
    assert result.exit_code == 0, result.stderr
    fresh = project / "fresh"
    assert load_config(fresh / "surveyctl.yaml").manifests == ["surveys/"]
    assert ".surveyctl/" in (fresh / ".gitignore").read_text().splitlines()
    assert yaml.safe_load((fresh / "surveys/example-tracker.yaml").read_text())["kind"] == "Survey"
    for workflow in (REPOSITORY / "examples" / "ci").glob("*.yml"):
        written = fresh / ".github" / "workflows" / workflow.name
        assert written.read_text() == workflow.read_text()


def test_what_init_writes_validates_and_plans(run_cli, project, monkeypatch):
    assert run_cli("init", "fresh").exit_code == 0
    monkeypatch.chdir(project / "fresh")  # its surveyctl.yaml: the embedded sandbox
    validated = run_cli("validate")
    assert validated.exit_code == 0, validated.stdout + validated.stderr
    assert validated.stdout.startswith("Valid: 1 survey")
    planned = run_cli("plan", "--detailed-exitcode")
    assert planned.exit_code == 2, planned.stderr
    assert "+ Survey/example-tracker will be created" in planned.stdout
    assert "+ quotas[male]: 100 completes; Gender: Male (111)" in planned.stdout


def test_init_refuses_to_overwrite_and_writes_nothing(run_cli, project):
    fresh = project / "fresh"
    fresh.mkdir()
    (fresh / "surveyctl.yaml").write_text("manifests: [mine/]\n")
    (fresh / ".gitignore").write_text("node_modules/\n")
    result = run_cli("init", "fresh")
    assert result.exit_code == 1
    assert "fresh/surveyctl.yaml already exists" in result.stderr
    assert (fresh / "surveyctl.yaml").read_text() == "manifests: [mine/]\n"
    assert (fresh / ".gitignore").read_text() == "node_modules/\n"
    assert sorted(p.name for p in fresh.iterdir()) == [".gitignore", "surveyctl.yaml"]


def test_init_adds_its_line_to_an_existing_gitignore_and_keeps_the_rest(run_cli, project):
    fresh = project / "fresh"
    fresh.mkdir()
    (fresh / ".gitignore").write_text("node_modules/\n*.pyc")  # no newline at the end
    (fresh / ".gitignore").chmod(0o664)
    result = run_cli("init", "fresh")
    assert result.exit_code == 0, result.stderr
    assert "added .surveyctl/ to fresh/.gitignore" in result.stdout
    lines = (fresh / ".gitignore").read_text().splitlines()
    assert lines[:2] == ["node_modules/", "*.pyc"]
    assert ".surveyctl/" in lines
    assert (fresh / ".gitignore").stat().st_mode & 0o777 == 0o664
    assert (fresh / "surveyctl.yaml").exists()


@pytest.mark.parametrize("spelling", [".surveyctl/", "/.surveyctl/", ".surveyctl"])
def test_init_keeps_a_gitignore_that_already_ignores_its_folder(run_cli, project, spelling):
    fresh = project / "fresh"
    fresh.mkdir()
    (fresh / ".gitignore").write_text(f"build/\n{spelling}\n")
    result = run_cli("init", "fresh")
    assert result.exit_code == 0, result.stderr
    assert "kept" in result.stdout and "already ignores" in result.stdout
    assert (fresh / ".gitignore").read_text() == f"build/\n{spelling}\n"


def test_init_refuses_a_gitignore_it_cannot_read_and_writes_nothing(run_cli, project):
    fresh = project / "fresh"
    fresh.mkdir()
    (fresh / ".gitignore").write_bytes(b"\xff\xfe not utf-8\n")
    result = run_cli("init", "fresh")
    assert result.exit_code == 1
    assert "Traceback" not in result.stderr
    assert "fresh/.gitignore cannot be read" in result.stderr
    assert sorted(p.name for p in fresh.iterdir()) == [".gitignore"]


def test_init_refuses_a_file_where_it_would_make_a_folder_and_writes_nothing(run_cli, project):
    fresh = project / "fresh"
    fresh.mkdir()
    (fresh / ".github").write_text("not a folder\n")
    result = run_cli("init", "fresh")
    assert result.exit_code == 1
    assert "Traceback" not in result.stderr
    assert "fresh/.github is a file where a folder is expected" in result.stderr
    assert sorted(p.name for p in fresh.iterdir()) == [".github"]


def test_init_refuses_to_replace_a_symbolic_link_whose_target_is_missing(run_cli, project):
    fresh = project / "fresh"
    fresh.mkdir()
    (fresh / ".gitignore").symlink_to(project / "shared-gitignore")
    result = run_cli("init", "fresh")
    assert result.exit_code == 1
    assert "fresh/.gitignore already exists" in result.stderr
    assert (fresh / ".gitignore").is_symlink()
    assert sorted(p.name for p in fresh.iterdir()) == [".gitignore"]


# -- show ------------------------------------------------------------------------------------


def test_show_prints_a_saved_plan_as_plan_printed_it(run_cli, manifests):
    manifests.write(survey_manifest("tracker"))
    for output_format in ("text", "json", "markdown"):
        planned = run_cli("plan", "manifests", "--format", output_format, "--out", "p.plan")
        shown = run_cli("show", "p.plan", "--format", output_format)
        assert shown.exit_code == 0, shown.stderr
        assert shown.stdout == planned.stdout


def test_show_needs_no_environment_or_connection(run_cli, manifests, project):
    manifests.write(survey_manifest("tracker"))
    assert run_cli("plan", "manifests", "--out", "p.plan").exit_code == 0
    (project / "surveyctl.yaml").unlink()  # no environment at all
    shown = run_cli("show", "p.plan")
    assert shown.exit_code == 0
    assert "+ Survey/tracker will be created" in shown.stdout
    assert "error" not in shown.stderr


def test_show_repeats_the_warnings_plan_gave_as_it_made_the_plan(run_cli, manifests, project):
    manifests.write(survey_manifest("tracker"))
    planned = run_cli("plan", "manifests", "--out", "p.plan")
    assert "surveyctl: warning: the state of environment 'local'" in planned.stderr
    shown = run_cli("show", "p.plan")
    assert shown.exit_code == 0
    assert "surveyctl: warning: the state of environment 'local'" in shown.stderr
    assert "is empty, so the plan creates 1 resource(s)" in shown.stderr
    as_json = run_cli("show", "p.plan", "--format", "json")  # the document carries them
    assert "warning" not in as_json.stderr
    assert "is empty, so the plan creates 1" in json.loads(as_json.stdout)["warnings"][0]


def test_show_of_a_file_that_is_not_a_plan_is_one_sentence(run_cli, project):
    (project / "p.plan").write_text("{}")
    result = run_cli("show", "p.plan")
    assert result.exit_code == 1
    assert "p.plan: not a surveyctl plan file" in result.stderr


# -- fmt -------------------------------------------------------------------------------------

MESSY = """\
# the tracker of the brand team
spec:
    survey_title: "Tracker"   # shown to respondents
    survey_category_code: 231
    survey_localization: en_US
    completes_required: 200
    expected_ir: 50
    expected_loi: 10
    field_time: 10
    live_url: https://survey.example.com/s?tid=[%%transaction_id%%]
    qualifications:
    -   qualification_code: 211   # gender
        condition_codes: ['111', "112"]
name: tracker
kind: Survey
"""


def _write(project: Path, text: str) -> Path:
    folder = project / "manifests"
    folder.mkdir(exist_ok=True)
    path = folder / "tracker.yaml"
    path.write_text(text)
    return path


def test_fmt_lays_out_a_manifest_and_keeps_its_comments(run_cli, project):
    path = _write(project, MESSY)
    result = run_cli("fmt", "manifests")
    assert result.exit_code == 0, result.stderr
    text = path.read_text()
    assert text.splitlines()[:3] == [
        "# the tracker of the brand team",
        "kind: Survey",
        "name: tracker",
    ]
    assert re.search(r'^  survey_title: "Tracker" +# shown to respondents$', text, re.M)
    assert re.search(r"^    - qualification_code: 211 +# gender$", text, re.M)
    assert yaml.safe_load(text) == yaml.safe_load(MESSY)


def test_fmt_is_idempotent(run_cli, project):
    path = _write(project, MESSY)
    run_cli("fmt", "manifests")
    once = path.read_text()
    again = run_cli("fmt", "manifests")
    assert path.read_text() == once
    assert "0 file(s) reformatted, 1 already formatted." in again.stderr


def test_fmt_check_lists_what_would_change_and_changes_nothing(run_cli, project):
    path = _write(project, MESSY)
    result = run_cli("fmt", "--check", "manifests")
    assert result.exit_code == 1
    assert result.stdout == f"would reformat {Path('manifests') / 'tracker.yaml'}\n"
    assert path.read_text() == MESSY
    run_cli("fmt", "manifests")
    assert run_cli("fmt", "--check", "manifests").exit_code == 0


def _three_files(run_cli, project) -> None:
    """manifests/ with a formatted file, one to reformat and one that is not YAML."""
    _write(project, MESSY)
    run_cli("fmt", "manifests")
    (project / "manifests" / "messy.yaml").write_text(MESSY)
    (project / "manifests" / "broken.yaml").write_text("kind: Survey\nname: [unclosed\n")


def test_fmt_check_says_the_same_whether_or_not_it_found_the_files_formatted_before(
    run_cli, project, monkeypatch
):
    _three_files(run_cli, project)
    monkeypatch.setenv("SURVEYCTL_CACHE_DIR", "off")
    fresh = run_cli("fmt", "--check", "manifests")
    monkeypatch.setenv("SURVEYCTL_CACHE_DIR", str(project.parent / "fmt-cache"))
    first, again = (run_cli("fmt", "--check", "manifests") for _ in range(2))
    for result in (first, again):
        assert (result.exit_code, result.stdout, result.stderr) == (
            fresh.exit_code,
            fresh.stdout,
            fresh.stderr,
        )
    assert fresh.stdout == f"would reformat {Path('manifests') / 'messy.yaml'}\n"


def test_fmt_check_does_not_lay_out_again_a_file_it_found_formatted(run_cli, project, monkeypatch):
    from surveyctl.manifests import layout

    _three_files(run_cli, project)
    run_cli("fmt", "--check", "manifests")
    laid_out = []
    real = layout.canonical
    monkeypatch.setattr(
        layout, "canonical", lambda text, file: laid_out.append(file) or real(text, file)
    )
    again = run_cli("fmt", "--check", "manifests")
    assert again.exit_code == 1
    assert sorted(Path(file).name for file in laid_out) == ["broken.yaml", "messy.yaml"]


def test_a_file_changed_since_fmt_found_it_formatted_is_laid_out_again(run_cli, project):
    path = _write(project, MESSY)
    run_cli("fmt", "manifests")
    assert run_cli("fmt", "--check", "manifests").exit_code == 0
    path.write_text(path.read_text().replace("kind: Survey", "kind:   Survey"))
    result = run_cli("fmt", "--check", "manifests")
    assert result.exit_code == 1
    assert result.stdout == f"would reformat {Path('manifests') / 'tracker.yaml'}\n"


def test_the_texts_fmt_found_formatted_are_kept_whole_and_private_to_the_user(
    run_cli, project, monkeypatch, tmp_path_factory
):
    _write(project, MESSY)
    cache = tmp_path_factory.mktemp("fmt-cache")
    monkeypatch.setenv("SURVEYCTL_CACHE_DIR", str(cache))
    run_cli("fmt", "manifests")
    earlier = os.umask(0o022)  # the usual umask, under which a file is made 0644
    try:
        assert run_cli("fmt", "--check", "manifests").exit_code == 0
    finally:
        os.umask(earlier)

    packs = list((cache / "formatted").iterdir())
    assert [len(json.loads(pack.read_bytes())) for pack in packs] == [1]
    assert [pack.stat().st_mode & 0o777 for pack in packs] == [0o600]


def test_fmt_keeps_the_file_mode(run_cli, project):
    path = _write(project, MESSY)
    path.chmod(0o664)
    run_cli("fmt", "manifests")
    assert path.stat().st_mode & 0o777 == 0o664


def test_fmt_of_a_file_that_is_not_yaml_names_file_and_line(run_cli, project):
    _write(project, "kind: Survey\nname: [unclosed\n")
    result = run_cli("fmt", "manifests")
    assert result.exit_code == 1
    # In validate's words, without its "error:".
    assert "tracker.yaml:3:1: Invalid YAML: did not find expected ',' or ']'" in result.stderr
    assert "Traceback" not in result.stderr


def test_fmt_keeps_blank_lines_at_the_end_of_a_file_out_of_its_middle(run_cli, project):
    path = _write(project, "name: t\nspec: {survey_title: x}\nkind: Survey\n\n\n")
    assert run_cli("fmt", "manifests").exit_code == 0
    assert path.read_text() == "kind: Survey\nname: t\nspec: {survey_title: x}\n"
    assert run_cli("fmt", "--check", "manifests").exit_code == 0


def test_fmt_keeps_blank_lines_after_a_nested_last_field_out_of_the_middle(run_cli, project):
    path = _write(project, "lifecycle:\n  prevent_destroy: true\nspec:\n  field_time: 10\n\n\n")
    run_cli("fmt", "manifests")
    assert path.read_text() == "spec:\n  field_time: 10\nlifecycle:\n  prevent_destroy: true\n"


@pytest.mark.parametrize(("text", "what"), [("hello\n", "the value 'hello'"), ("- a\n", "a list")])
def test_fmt_leaves_a_file_that_is_no_manifest_as_it_is(run_cli, project, text, what):
    path = project / "notes.txt"
    path.write_text(text)
    result = run_cli("fmt", "notes.txt")
    assert result.exit_code == 1
    assert path.read_text() == text  # "hello" would have gained a `...` line
    assert (
        "notes.txt:1: a document that is not a mapping (kind, name, spec...) is no manifest, "
        f"here {what}; the file is left as it is"
    ) in result.stderr


def test_fmt_check_of_a_folder_without_manifests_fails_as_validate_does(run_cli, project):
    (project / "empty").mkdir()
    result = run_cli("fmt", "--check", "empty")
    assert result.exit_code == 1
    assert result.stderr.splitlines()[-1] == (
        "Error: No manifest files (*.yaml, *.yml) found in empty"
    )


def test_fmt_of_a_missing_file_says_error_once(run_cli, project):
    result = run_cli("fmt", "nope.yaml")
    assert result.exit_code == 1
    assert result.stderr == "Error: No such file or folder: nope.yaml.\n"


HEADER = """\
# yaml-language-server: $schema=../schemas/manifest.schema.json
# Owner: research team
---
"""


def test_fmt_keeps_the_comments_and_the_marker_above_the_first_document(run_cli, project):
    path = _write(project, HEADER + MESSY)
    assert run_cli("fmt", "manifests").exit_code == 0
    assert path.read_text().splitlines()[:5] == [
        "# yaml-language-server: $schema=../schemas/manifest.schema.json",
        "# Owner: research team",
        "---",
        "# the tracker of the brand team",
        "kind: Survey",
    ]
    assert run_cli("fmt", "--check", "manifests").exit_code == 0


TRAILING_MARKERS = ["---\n# next survey goes here\n", "--- # next survey goes here\n"]


@pytest.mark.parametrize("tail", TRAILING_MARKERS)
def test_fmt_keeps_the_comments_after_a_trailing_marker_and_makes_no_document(
    run_cli, project, tail
):
    path = _write(project, MESSY + tail)
    assert run_cli("fmt", "manifests").exit_code == 0
    text = path.read_text()
    assert text.startswith("# the tracker of the brand team\nkind: Survey\nname: tracker\n")
    assert text.endswith("\n" + tail)
    assert "null" not in text
    assert run_cli("fmt", "--check", "manifests").exit_code == 0


def test_fmt_keeps_the_comments_after_an_end_of_document_marker(run_cli, project):
    path = _write(project, MESSY + "...\n# the 2024 wave, kept for reference\n")
    assert run_cli("fmt", "manifests").exit_code == 0
    text = path.read_text()
    assert text.startswith("# the tracker of the brand team\nkind: Survey\nname: tracker\n")
    assert text.endswith("\n...\n# the 2024 wave, kept for reference\n")
    assert run_cli("fmt", "--check", "manifests").exit_code == 0


def test_fmt_keeps_a_document_of_comments_between_two_documents_as_written(run_cli, project):
    path = _write(project, MESSY + "---\n# a wave to come\n---\n" + MESSY)
    assert run_cli("fmt", "manifests").exit_code == 0
    text = path.read_text()
    assert "\n---\n# a wave to come\n---\n# the tracker of the brand team\nkind: Survey\n" in text
    assert "null" not in text
    assert run_cli("fmt", "--check", "manifests").exit_code == 0


@pytest.mark.parametrize("marker", ["--- &tracker", "--- !!map", "--- &t !!map  # the tracker"])
def test_fmt_keeps_the_anchor_and_tag_after_a_documents_marker(run_cli, project, marker):
    path = _write(project, marker + "\n" + MESSY)
    assert run_cli("fmt", "manifests").exit_code == 0
    assert path.read_text().splitlines()[:3] == [
        marker,
        "# the tracker of the brand team",
        "kind: Survey",
    ]
    assert run_cli("fmt", "--check", "manifests").exit_code == 0


def test_fmt_puts_a_document_after_its_markers_tag_on_a_line_of_its_own(run_cli, project):
    path = _write(project, "--- !!map {name: tracker,   kind: Survey}\n")
    assert run_cli("fmt", "manifests").exit_code == 0
    assert path.read_text() == "--- !!map\n{kind: Survey, name: tracker}\n"
    assert run_cli("fmt", "--check", "manifests").exit_code == 0


def test_fmt_leaves_a_file_alone_rather_than_lose_a_comment_in_a_flow_list(run_cli, project):
    written = "name: t\nkind: Survey\nspec:\n  condition_codes: ['111',\n    # female\n    '112']\n"
    path = _write(project, written)
    result = run_cli("fmt", "manifests")
    assert result.exit_code == 1
    assert "tracker.yaml:5: laid out, the file would lose the comment '# female'" in result.stderr
    assert path.read_text() == written


def test_fmt_leaves_a_file_alone_whose_document_needs_a_tag_directive(run_cli, project):
    written = "%TAG !y! tag:yaml.org,2002:\n---\nname: t\nkind: !y!str Survey\n"
    path = _write(project, written)
    result = run_cli("fmt", "manifests")
    assert result.exit_code == 1
    assert "tracker.yaml:3: fmt cannot lay out a document apart from the directives" in (
        result.stderr
    )
    assert path.read_text() == written


def test_fmt_of_a_file_name_longer_than_the_system_allows_is_one_sentence(run_cli, project):
    name = "a" * 256 + ".yaml"
    result = run_cli("fmt", name)
    assert result.exit_code == 1
    assert result.stderr == f"Error: Cannot read {name}: File name too long.\n"


def test_the_examples_are_in_the_canonical_layout(run_cli):
    result = run_cli("fmt", "--check", str(REPOSITORY / "examples"))
    assert result.exit_code == 0, result.stdout


# -- --target --------------------------------------------------------------------------------


def _group(name: str, ref: str, surveys: list[str]) -> dict:
    return {
        "kind": "ExclusionGroup",
        "name": name,
        "spec": {
            "buyer_surveygroup_ref": ref,
            "name": name,
            "exclusion_period": 30,
            "surveys": surveys,
        },
    }


def _plan_addresses(run_cli, *args: str) -> set[str]:
    result = run_cli("plan", "manifests", "--format", "json", *args)
    assert result.exit_code == 0, result.stderr
    return {r["address"] for r in json.loads(result.stdout)["resources"]}


def test_target_plans_only_that_resource_and_says_the_plan_is_partial(run_cli, manifests):
    for name in ("first", "second"):
        manifests.write(survey_manifest(name))
    assert _plan_addresses(run_cli, "--target", "Survey/first") == {"Survey/first"}
    text = run_cli("plan", "manifests", "--target", "first").stdout
    assert "warning: --target: this plan is partial: only first" in text


def test_targeting_a_group_plans_its_surveys_too(run_cli, manifests, unique):
    for name in ("first", "second", "third"):
        manifests.write(survey_manifest(name))
    manifests.write(_group("trackers", f"trackers-{unique}", ["first", "second"]))
    assert _plan_addresses(run_cli, "--target", "ExclusionGroup/trackers") == {
        "ExclusionGroup/trackers",
        "Survey/first",
        "Survey/second",
    }


def test_apply_with_a_target_leaves_the_other_resources_alone(run_cli, manifests):
    for name in ("first", "second"):
        manifests.write(survey_manifest(name))
    applied = run_cli("apply", "manifests", "--auto-approve", "--target", "second")
    assert applied.exit_code == 0, applied.stderr
    assert "Survey/first" not in applied.stdout + applied.stderr
    plan = json.loads(run_cli("plan", "manifests", "--format", "json").stdout)
    actions = {r["address"]: r["action"] for r in plan["resources"]}
    assert actions == {"Survey/first": "create", "Survey/second": "no-op"}


def test_a_bare_name_of_a_survey_and_a_group_is_refused_as_ambiguous(run_cli, manifests, unique):
    manifests.write(survey_manifest("trackers"))
    group = _group("trackers", f"trackers-{unique}", ["trackers"])
    (manifests.folder / "group.yaml").write_text(yaml.safe_dump(group, sort_keys=False))
    result = run_cli("plan", "manifests", "--target", "trackers")
    assert result.exit_code == 1
    assert (
        "--target trackers is ambiguous; use one of ExclusionGroup/trackers, Survey/trackers"
        in result.stderr
    )


def test_an_unknown_target_is_refused_with_a_suggestion(run_cli, manifests):
    manifests.write(survey_manifest("tracker"))
    result = run_cli("plan", "manifests", "--target", "Survey/trackr")
    assert result.exit_code == 1
    assert "--target Survey/trackr: no manifest or state entry has that address" in result.stderr
    assert "(did you mean 'Survey/tracker'?)" in result.stderr


def test_a_target_cannot_cut_a_saved_plan(run_cli, manifests):
    manifests.write(survey_manifest("tracker"))
    run_cli("plan", "manifests", "--out", "p.plan")
    result = run_cli("apply", "p.plan", "--target", "tracker")
    assert result.exit_code == 2
    assert "a saved plan is applied whole" in result.stderr


# -- pre-commit hooks ------------------------------------------------------------------------


def _hook(hook_id: str) -> list[str]:
    hooks = yaml.safe_load((REPOSITORY / ".pre-commit-hooks.yaml").read_text())
    (hook,) = [h for h in hooks if h["id"] == hook_id]
    command = shlex.split(hook["entry"])
    assert command[0] == "surveyctl"
    return command[1:]


def test_the_pre_commit_hooks_pass_good_manifests_and_fail_bad_ones(run_cli, project):
    (project / "surveyctl.yaml").write_text("manifests: [manifests/]\n")
    path = _write(project, MESSY.replace("    field_time: 10\n", ""))  # field_time required
    assert run_cli(*_hook("surveyctl-validate")).exit_code == 1
    assert run_cli(*_hook("surveyctl-fmt")).exit_code == 1
    path.write_text(MESSY)
    run_cli("fmt")
    assert run_cli(*_hook("surveyctl-validate")).exit_code == 0
    assert run_cli(*_hook("surveyctl-fmt")).exit_code == 0


def test_fmt_leaves_a_file_larger_than_a_manifest_may_be_alone(run_cli, project):
    big = project / "manifests" / "big.yaml"
    big.parent.mkdir(exist_ok=True)
    text = "kind: Survey\nname: big\nspec:\n  survey_title: " + "x" * 8_100_000 + "\n"
    big.write_text(text)
    result = run_cli("fmt", "manifests")
    assert result.exit_code == 1
    assert "larger than the 8 MB a manifest file may be; nothing was changed" in result.stderr
    assert big.read_text() == text


@pytest.mark.parametrize(
    ("raw", "line"),
    [(b"kind: Survey\nname: \xe9t\xe9\n", 2), ("kind: Survey\n".encode("utf-16"), 1)],
    ids=["latin-1", "utf-16"],
)
def test_fmt_leaves_a_file_that_is_not_utf8_alone_naming_its_line(run_cli, project, raw, line):
    path = project / "manifests" / "latin.yaml"
    path.parent.mkdir(exist_ok=True)
    path.write_bytes(raw)
    result = run_cli("fmt", "--check", "manifests")
    assert result.exit_code == 1
    assert "Traceback" not in result.stderr
    assert f"{Path('manifests') / 'latin.yaml'}:{line}: the file is not UTF-8 text" in result.stderr
    assert path.read_bytes() == raw


def test_every_target_that_names_nothing_is_refused_in_one_run(run_cli, manifests):
    manifests.write(survey_manifest("tracker"))
    result = run_cli(
        "plan",
        "manifests",
        "--target",
        "Survey/trackr",
        "--target",
        "tracker",
        "--target",
        "nothing-like-it",
    )
    assert result.exit_code == 1
    assert (
        "--target Survey/trackr: no manifest or state entry has that address (did you mean "
        "'Survey/tracker'?); --target nothing-like-it: no resource has that name"
    ) in result.stderr


def test_apply_of_a_plan_file_beside_manifests_is_refused_in_one_sentence(run_cli, manifests):
    manifests.write(survey_manifest("tracker"))
    assert run_cli("plan", "manifests", "--out", "p.plan").exit_code == 0
    result = run_cli("apply", "p.plan", "manifests", "--auto-approve")
    assert result.exit_code == 1
    assert result.stderr.splitlines()[-1] == (
        "Error: p.plan is a saved plan, which apply takes alone (`surveyctl apply p.plan`), "
        "not with manifest files and folders"
    )


def test_apply_of_a_plan_file_named_twice_names_it_once_and_the_command_that_applies_it(
    run_cli, manifests
):
    manifests.write(survey_manifest("tracker"))
    assert run_cli("plan", "manifests", "--out", "p.plan").exit_code == 0
    result = run_cli("apply", "p.plan", "p.plan", "--auto-approve")
    assert result.exit_code == 1
    assert result.stderr.splitlines()[-1] == (
        "Error: p.plan is named twice: apply takes a saved plan once, alone: "
        "`surveyctl apply p.plan`"
    )
