"""`state rebuild --format json` writes JSON as the other commands do: UTF-8, not escapes."""

from __future__ import annotations

import json
import shutil

from ..reconcile.conftest import Manifests, group_manifest, survey_manifest


def test_rebuild_json_keeps_a_non_ascii_group_reference_as_written(
    project, sandbox, run_cli, unique_ref="trackers-münchen"
):
    manifests = Manifests(project)
    manifests.write(survey_manifest("tracker"))
    manifests.write(group_manifest(f"{unique_ref}-{project.name[-8:]}", "tracker"))
    assert run_cli("apply", "manifests", "--auto-approve").exit_code == 0
    shutil.rmtree(project / ".surveyctl" / "state")
    result = run_cli("state", "rebuild", "manifests", "--yes", "--format", "json")
    assert result.exit_code == 0, result.stdout + result.stderr
    assert "münchen" in result.stdout
    document = json.loads(result.stdout)
    assert document["adopt"]["ExclusionGroup/trackers"]["id"].startswith(unique_ref)
