"""A saved plan cannot delete what the project's manifests still describe, write a resource
twice, stand for a part of a plan, or overwrite a manifest."""

from __future__ import annotations

import json
import shutil
from pathlib import Path

from surveyctl.state import FileStateStore, fingerprint

from .conftest import survey_manifest, survey_title


def _configured(project: Path) -> None:
    config = project / "surveyctl.yaml"
    config.write_text(config.read_text() + "manifests: [manifests/]\n", encoding="utf-8")


def _managed(project: Path) -> set[str]:
    return set(FileStateStore(project / ".surveyctl" / "state" / "local.json").load().resources)


def _applied(run_cli, manifests, *names: str) -> None:
    for name in names:
        manifests.write(survey_manifest(name))
    result = run_cli("apply", "--auto-approve")
    assert result.exit_code == 0, result.stdout + result.stderr


def test_destroy_with_paths_narrower_than_the_configured_manifests_is_refused(
    project, manifests, run_cli
):
    _configured(project)
    _applied(run_cli, manifests, "alpha", "bravo")
    result = run_cli("plan", "manifests/alpha.yaml", "--destroy")
    assert result.exit_code == 1
    assert "--destroy deletes what the manifests no longer describe" in result.stderr
    applied = run_cli("apply", "manifests/alpha.yaml", "--destroy", "--auto-approve")
    assert applied.exit_code == 1
    assert _managed(project) == {"Survey/alpha", "Survey/bravo"}


def test_destroy_of_the_configured_manifests_named_as_paths_is_planned(project, manifests, run_cli):
    _configured(project)
    _applied(run_cli, manifests, "alpha", "bravo")
    manifests.remove("bravo")
    result = run_cli("plan", "manifests", "--destroy")
    assert result.exit_code == 0, result.stdout + result.stderr
    assert "- Survey/bravo" in result.stdout


def test_a_narrowed_plan_swapped_for_a_reviewed_one_deletes_nothing(
    project, manifests, run_cli, api
):
    # The reviewed plan deletes one survey whose manifest was removed; a plan made from one
    # manifest alone (which would delete every other) is put in its place.
    _configured(project)
    _applied(run_cli, manifests, "alpha", "bravo", "charlie")
    shutil.move(project / "manifests" / "charlie.yaml", project / "charlie.yaml")
    assert run_cli("plan", "--destroy", "--out", "reviewed.plan").exit_code == 0
    narrowed = json.loads((project / "reviewed.plan").read_text())
    narrowed["plan"]["sources"] = ["manifests/alpha.yaml"]
    narrowed["checksum"] = fingerprint(narrowed["plan"])
    (project / "reviewed.plan").write_text(json.dumps(narrowed))
    result = run_cli("apply", "reviewed.plan", "--destroy")
    assert result.exit_code == 1
    assert "are not the manifests: of surveyctl.yaml" in result.stderr
    assert _managed(project) == {"Survey/alpha", "Survey/bravo", "Survey/charlie"}
    titles = {s["survey_title"] for s in api.list_surveys(status=[11, 22, 33, 44])}
    assert survey_title("bravo") in titles


def test_a_plan_file_listing_a_resource_twice_is_refused_before_any_write(
    project, manifests, run_cli, api
):
    _configured(project)
    _applied(run_cli, manifests, "alpha")
    manifests.write(survey_manifest("alpha", survey_title=survey_title("alpha-renamed")))
    assert run_cli("plan", "--out", "change.plan").exit_code == 0
    document = json.loads((project / "change.plan").read_text())
    document["plan"]["resources"] *= 2
    document["checksum"] = fingerprint(document["plan"])
    (project / "change.plan").write_text(json.dumps(document))
    result = run_cli("apply", "change.plan")
    assert result.exit_code == 1
    assert "Survey/alpha is listed twice" in result.stderr
    titles = {s["survey_title"] for s in api.list_surveys(status=[11, 22, 33, 44])}
    assert survey_title("alpha-renamed") not in titles


def test_a_plan_of_some_targets_cannot_be_saved(project, manifests, run_cli):
    _configured(project)
    _applied(run_cli, manifests, "alpha")
    result = run_cli("plan", "--target", "Survey/alpha", "--out", "some.plan")
    assert result.exit_code == 2
    assert "--out cannot be combined with --target" in result.stderr
    assert not (project / "some.plan").exists()


def test_plan_out_does_not_overwrite_a_manifest(project, manifests, run_cli):
    _configured(project)
    _applied(run_cli, manifests, "alpha")
    written = (project / "manifests" / "alpha.yaml").read_text()
    result = run_cli("plan", "--out", "manifests/alpha.yaml")
    assert result.exit_code == 2
    assert "read as a manifest" in result.stderr
    assert (project / "manifests" / "alpha.yaml").read_text() == written


def test_plan_out_does_not_overwrite_a_file_that_is_not_a_plan(project, manifests, run_cli):
    _configured(project)
    _applied(run_cli, manifests, "alpha")
    (project / "notes.txt").write_text("keep me\n")
    result = run_cli("plan", "--out", "notes.txt")
    assert result.exit_code == 2
    assert "exists and is not a plan file" in result.stderr
    assert (project / "notes.txt").read_text() == "keep me\n"


def test_plan_out_replaces_an_earlier_plan(project, manifests, run_cli):
    _configured(project)
    _applied(run_cli, manifests, "alpha")
    manifests.write(survey_manifest("bravo"))
    assert run_cli("plan", "--out", "change.plan").exit_code == 0
    manifests.remove("bravo")
    manifests.write(survey_manifest("charlie"))
    assert run_cli("plan", "--out", "change.plan").exit_code == 0
    shown = run_cli("show", "change.plan").stdout
    assert "+ Survey/charlie will be created" in shown
    assert "Survey/bravo" not in shown
