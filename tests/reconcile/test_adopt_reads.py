"""What `plan --adopt` reads: each adopted resource once, over real HTTP against the sandbox."""

from __future__ import annotations

import shutil

from tests.reconcile.conftest import group_manifest, survey_manifest
from tests.reconcile.test_list_reads import requests


def test_an_adopting_plan_reads_each_adopted_exclusion_group_once(
    own_market, manifests, project, run_cli, unique
):
    ref = f"adopted-{unique}"
    for name in ("a", "b"):
        manifests.write(survey_manifest(name))
    manifests.write(group_manifest(ref, "a", "b"))
    assert run_cli("apply", "manifests", "--auto-approve").exit_code == 0
    shutil.rmtree(project / ".surveyctl" / "state")  # the state lost: all three are adopted

    planned = run_cli("--debug", "plan", "manifests", "--adopt")

    assert planned.exit_code == 0, planned.stdout + planned.stderr
    assert "3 resources are on the service adopted with --adopt" in planned.stdout
    assert [r for r in requests(planned) if r.startswith("GET /surveygroups")] == [
        f"GET /surveygroups/{ref}"
    ]
