"""Commands that surveyctl tells the user to run, over real HTTP: they name the environment and
the configuration the user chose, so that pasting one acts where the command acted."""

from __future__ import annotations

import json
import re

from surveyctl.state.file.lock import StateLock

from .conftest import survey_manifest

SUGGESTED = re.compile(r"`(surveyctl [^`]+)`")


def _suggested(text: str, subcommand: str) -> list[str]:
    return [c for c in SUGGESTED.findall(text) if subcommand in c]


def test_import_without_out_suggests_the_import_in_the_environment_given(project, api, run_cli):
    survey_id = api.create_survey(survey_manifest("x")["spec"])["ps_survey_id"]
    result = run_cli("--env", "local", "import", str(survey_id), "--name", "hand-made")
    assert _suggested(result.stderr, "import") == [
        f"surveyctl --env local import {survey_id} --name hand-made --out FILE"
    ]


def test_import_without_env_suggests_the_import_as_short_as_before(project, api, run_cli):
    survey_id = api.create_survey(survey_manifest("x")["spec"])["ps_survey_id"]
    result = run_cli("import", str(survey_id), "--name", "hand-made")
    assert _suggested(result.stderr, "import") == [
        f"surveyctl import {survey_id} --name hand-made --out FILE"
    ]


def test_an_environment_chosen_by_the_variable_is_named_in_the_suggestion(
    project, api, run_cli, monkeypatch
):
    monkeypatch.setenv("SURVEYCTL_ENV", "local")
    survey_id = api.create_survey(survey_manifest("x")["spec"])["ps_survey_id"]
    result = run_cli("import", str(survey_id), "--name", "hand-made")
    assert _suggested(result.stderr, "import") == [
        f"surveyctl --env local import {survey_id} --name hand-made --out FILE"
    ]


def test_a_configuration_given_is_named_in_the_suggestion(project, api, run_cli):
    survey_id = api.create_survey(survey_manifest("x")["spec"])["ps_survey_id"]
    (project / "surveyctl.yaml").rename(project / "team config.yaml")
    result = run_cli(
        "--config", "team config.yaml", "import", str(survey_id), "--name", "hand-made"
    )
    assert _suggested(result.stderr, "import") == [
        f"surveyctl --config 'team config.yaml' import {survey_id} --name hand-made --out FILE"
    ]


def test_a_plan_suggests_state_rm_in_the_environment_given(project, manifests, run_cli):
    manifests.write(survey_manifest("alpha"))
    manifests.write(survey_manifest("bravo"))
    assert run_cli("apply", "manifests", "--auto-approve").exit_code == 0
    manifests.remove("bravo")
    plan = run_cli("plan", "manifests", "--env", "local")
    assert "`surveyctl --env local state rm" in plan.stdout


def test_a_json_plan_suggests_state_rm_in_the_environment_given(project, manifests, run_cli):
    manifests.write(survey_manifest("alpha"))
    manifests.write(survey_manifest("bravo"))
    assert run_cli("apply", "manifests", "--auto-approve").exit_code == 0
    manifests.remove("bravo")
    plan = json.loads(run_cli("--env", "local", "plan", "manifests", "--format", "json").stdout)
    told = " ".join(note["message"] for note in plan["notes"])
    assert "`surveyctl --env local state rm" in told
    assert "`surveyctl state rm" not in told


def test_a_plan_without_env_suggests_state_rm_as_short_as_before(project, manifests, run_cli):
    manifests.write(survey_manifest("alpha"))
    manifests.write(survey_manifest("bravo"))
    assert run_cli("apply", "manifests", "--auto-approve").exit_code == 0
    manifests.remove("bravo")
    plan = run_cli("plan", "manifests")
    assert "`surveyctl state rm" in plan.stdout


def test_a_locked_state_suggests_force_unlock_with_the_configuration_given(
    project, manifests, run_cli
):
    manifests.write(survey_manifest("alpha"))
    (project / "surveyctl.yaml").rename(project / "team.yaml")
    lock = StateLock(project / ".surveyctl" / "state" / "local.json", "another apply")
    with lock:
        result = run_cli("--config", "team.yaml", "--env", "local", "apply", "manifests")
    assert result.exit_code == 1
    unlocks = _suggested(result.stderr, "force-unlock")
    assert unlocks
    assert all(
        c.startswith("surveyctl --config team.yaml --env local force-unlock") for c in unlocks
    )
