"""Names, ids and titles come from manifests in pull requests (and from the service): a plan
shows them with every character a terminal acts on escaped, as JSON writes it, so a quota id
cannot colour, clear or retitle the terminal, nor break the plan's lines."""

from __future__ import annotations

from click.testing import CliRunner

from surveyctl.cli.main import cli
from surveyctl.render.values import printable_lines

from .conftest import survey_manifest

ESCAPES = "\x1b[2J\x1b]0;pwned\x07"  # clear the screen, retitle the window, ring the bell


def hostile_quota_manifest() -> dict:
    manifest = survey_manifest("hostile")
    manifest["spec"]["quotas"][0]["buyer_quota_id"] = f"male{ESCAPES}\nfemale"
    return manifest


def plan_on_a_terminal(*args: str):
    """`surveyctl plan ARGS` as a terminal gets it: click keeps escapes (color=True)."""
    return CliRunner().invoke(cli, ["plan", *args], color=True, catch_exceptions=False)


def test_a_quota_id_with_terminal_escapes_reaches_the_terminal_escaped(project, manifests):
    manifests.write(hostile_quota_manifest())
    result = plan_on_a_terminal("manifests")
    assert result.exit_code == 0, result.output
    assert "\x1b]0;" not in result.stdout and "\x07" not in result.stdout
    assert "\x1b[2J" not in result.stdout
    assert "quotas[male\\u001b[2J\\u001b]0;pwned\\u0007\\u000afemale]: 100 completes" in (
        result.stdout
    )


def test_a_quota_id_with_a_line_break_stays_on_its_plan_line(project, manifests):
    manifests.write(hostile_quota_manifest())
    result = plan_on_a_terminal("manifests", "--no-color")
    lines = result.stdout.splitlines()
    assert not any(line.startswith("female]") for line in lines)
    assert [line.strip()[:14] for line in lines if "quotas[" in line] == [
        "+ quotas[male\\",
        "+ quotas[femal",
    ]


def test_a_right_to_left_override_in_a_title_is_shown_escaped(project, manifests):
    manifest = survey_manifest("reordered")
    manifest["spec"]["survey_title"] += " \u202etpircs"
    manifests.write(manifest)
    result = plan_on_a_terminal("manifests", "--format", "markdown")
    assert "\u202e" not in result.stdout
    assert "\\u202etpircs" in result.stdout


def test_the_joiners_of_scripts_and_emoji_in_a_title_are_shown_as_written(project, manifests):
    # Hindi and Persian words, and emoji sequences, are written with zero-width joiners and
    # non-joiners: format characters that reorder nothing and belong to the text.
    hindi = "\u0915\u094d\u200d\u0937"
    persian = "\u0645\u06cc\u200c\u062e\u0648\u0627\u0647\u0645"
    title = f"Kshatriya {hindi} {persian} \U0001f469\u200d\U0001f4bb"
    manifest = survey_manifest("joined")
    manifest["spec"]["survey_title"] = title
    manifests.write(manifest)
    result = plan_on_a_terminal("manifests", "--no-color")
    assert result.exit_code == 0, result.output
    assert f'survey_title: "{title}"' in result.stdout


def test_a_survey_title_from_the_service_is_listed_as_written_not_read_as_markup(
    own_market, run_cli
):
    # Titles come from the service (and so from anyone on the account): "[/x]" ended the
    # command in a markup error, "[bold]" styled the table and an escape reached the terminal.
    title = "Brand [/x] tracker [bold]B[/bold] :thumbs_up: \x1b[2J"
    own_market.create_survey(survey_manifest("x", survey_title=title)["spec"])
    result = run_cli("surveys", "list")
    assert result.exit_code == 0, result.stdout + result.stderr
    assert "Brand [/x] tracker [bold]B[/bold] :thumbs_up: \\u001b[2J" in result.stdout
    assert "\x1b" not in result.stdout


def test_an_argument_with_terminal_escapes_is_echoed_escaped_in_the_error(project, manifests):
    manifests.write(survey_manifest("tracker"))
    result = plan_on_a_terminal("manifests", "--target", f"Survey/x{ESCAPES}")
    assert result.exit_code == 1
    assert "\x1b" not in result.stderr and "\x07" not in result.stderr
    assert "--target Survey/x\\u001b[2J\\u001b]0;pwned\\u0007: no manifest" in result.stderr


def test_an_extra_argument_with_terminal_escapes_is_echoed_escaped(project):
    result = CliRunner().invoke(cli, ["state", "list", f"x{ESCAPES}"], color=True)
    assert result.exit_code == 2
    assert "\x1b" not in result.stderr and "\x07" not in result.stderr
    assert "unexpected extra argument (x\\u001b[2J" in result.stderr


def test_a_file_name_with_terminal_escapes_is_shown_escaped_in_its_finding(project):
    result = plan_on_a_terminal(f"missing{ESCAPES}.yaml")
    assert result.exit_code == 1
    assert "\x1b" not in result.stderr and "\x07" not in result.stderr
    assert "No such file or folder: missing\\u001b[2J" in result.stderr


def test_a_message_of_several_lines_keeps_its_line_breaks_and_escapes_the_rest():
    message = "cannot apply:\n  the service said: busy\r\x1b[2J"
    assert printable_lines(message) == "cannot apply:\n  the service said: busy\\u000d\\u001b[2J"
