"""`required_version` of surveyctl.yaml: a team pins the versions of surveyctl its project
allows, and a surveyctl outside the pin refuses every command that reads the file, changing
nothing, while `--version` and `--help` still say what is installed."""

from __future__ import annotations

from pathlib import Path

import pytest

from surveyctl import __version__
from surveyctl.version_pin import PinError, allows, parse_pin

from .reconcile.conftest import Manifests, survey_manifest, survey_title

AHEAD = f">{__version__}"  # a pin this surveyctl is too old for


def pinned(project: Path, pin: str) -> None:
    """Adds `required_version: pin` as the first line of the project's surveyctl.yaml."""
    path = project / "surveyctl.yaml"
    path.write_text(f"required_version: {pin!r}\n{path.read_text()}", encoding="utf-8")


def refusal(result) -> str:
    assert result.exit_code == 1, result.stdout + result.stderr
    assert "Traceback" not in result.stderr
    (line,) = [line for line in result.stderr.splitlines() if line.startswith("Error:")]
    return line


def excluded(pin: str) -> str:
    return (
        f"Error: surveyctl.yaml:1:1: required_version {pin!r} does not allow this surveyctl "
        f"({__version__}): install a version it allows (the one the team runs), or change "
        "required_version when the whole team moves to another; nothing was changed"
    )


def test_a_pin_that_allows_this_version_lets_plan_run(run_cli, project):
    pinned(project, f">={__version__}, <999")
    Manifests(project).write(survey_manifest("pinned"))

    result = run_cli("plan", "manifests")

    assert result.exit_code == 0, result.stdout + result.stderr
    assert "Survey/pinned will be created" in result.stdout


def test_a_pin_that_excludes_this_version_refuses_plan(run_cli, project):
    pinned(project, AHEAD)
    Manifests(project).write(survey_manifest("pinned"))

    assert refusal(run_cli("plan", "manifests")) == excluded(AHEAD)


def test_a_pin_that_excludes_this_version_refuses_apply_and_creates_nothing(run_cli, project, api):
    pinned(project, AHEAD)
    Manifests(project).write(survey_manifest("pinned"))

    assert refusal(run_cli("apply", "manifests", "--auto-approve")) == excluded(AHEAD)
    titles = {survey["survey_title"] for survey in api.list_surveys(targeting=False)}
    assert survey_title("pinned") not in titles
    assert not (project / ".surveyctl" / "state").exists()


def test_a_pin_is_told_before_a_setting_of_the_version_it_pins(run_cli, project):
    # The version the team pins may have added settings: the person is told which version to
    # run, not that a setting is unknown.
    pinned(project, AHEAD)
    path = project / "surveyctl.yaml"
    path.write_text(path.read_text() + "a_later_setting: true\n", encoding="utf-8")

    assert refusal(run_cli("validate", "manifests")) == excluded(AHEAD)


@pytest.mark.parametrize("option", ["--version", "--help"])
def test_a_surveyctl_the_pin_excludes_still_says_what_it_is(run_cli, project, option):
    pinned(project, AHEAD)

    result = run_cli(option)

    assert result.exit_code == 0, result.stdout + result.stderr
    assert (f"surveyctl, version {__version__}" if option == "--version" else "Usage:") in (
        result.stdout
    )


def test_a_command_s_help_works_under_a_pin_that_excludes_this_version(run_cli, project):
    pinned(project, AHEAD)

    result = run_cli("plan", "--help")

    assert result.exit_code == 0, result.stdout + result.stderr
    assert "Usage:" in result.stdout


@pytest.mark.parametrize(
    ("pin", "problem"),
    [
        ("~>0.1", "has clause '~>0.1', which is not one it accepts"),
        ("0.1.0", "has clause '0.1.0', which is not one it accepts"),
        (">=0.1,", "has an empty clause, which is not one it accepts"),
        ("<0.2rc1", "has clause '<0.2rc1', which is not one it accepts"),
        (">=0.1.*", "has '>=0.1.*': only == and != take a .* after the number"),
        ("~=1", "has '~=1': ~= needs a number of two parts at least (such as ~=0.2)"),
    ],
)
def test_an_unparsable_pin_is_refused_at_its_line(run_cli, project, pin, problem):
    pinned(project, pin)

    line = refusal(run_cli("validate", "manifests"))

    assert line.startswith(f"Error: surveyctl.yaml:1:1: required_version {pin!r} {problem}")


def test_a_pin_that_is_not_a_string_is_refused_at_its_line(run_cli, project):
    path = project / "surveyctl.yaml"
    path.write_text("required_version: 0.1\n" + path.read_text(), encoding="utf-8")

    assert refusal(run_cli("validate", "manifests")) == (
        "Error: surveyctl.yaml:1:1: required_version must be a quoted string of version "
        'clauses, such as ">=0.1.0, <0.3"'
    )


@pytest.mark.parametrize(
    ("pin", "version", "allowed"),
    [
        (">=0.1.0, <0.3", "0.1.0", True),
        (">=0.1.0, <0.3", "0.3.0", False),
        (">=0.1.0, <0.3", "0.2.9", True),
        ("==0.1", "0.1.0", True),  # the shorter is padded with zeros
        ("!=0.1.0", "0.1", False),
        (">0.1", "0.1.0", False),
        ("<=0.1", "0.1.0", True),
        ("==0.1.*", "0.1.7", True),
        ("==0.1.*", "0.10.0", False),
        ("!=0.1.*", "0.1.2", False),
        ("~=0.2", "0.9.1", True),
        ("~=0.2", "1.0.0", False),
        ("~=0.2.1", "0.2.5", True),
        ("~=0.2.1", "0.3.0", False),
        ("~=0.2.1", "0.2.0", False),
        (" >= 0.1 ,< 1 ", "0.5", True),
    ],
)
def test_a_pin_allows_what_pep_440_allows(pin, version, allowed):
    assert allows(parse_pin(pin), version) is allowed


def test_an_empty_pin_is_refused():
    with pytest.raises(PinError, match="is empty"):
        parse_pin("  ")
