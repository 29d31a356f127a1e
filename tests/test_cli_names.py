"""One spelling works on every command: the output file option, the catalogue refresh, the
names of `--format`; and a misspelt command, a Terraform-style `-out=x` or a `--json` gets
"did you mean"."""

from __future__ import annotations

import json

import click
import pytest
from click.testing import CliRunner

from surveyctl.cli.main import cli


def _commands(group: click.Group = cli, prefix: str = "") -> list[tuple[str, click.Command]]:
    context = click.Context(group)
    found = []
    for name in group.list_commands(context):
        command = group.get_command(context, name)
        if isinstance(command, click.Group):
            found.extend(_commands(command, f"{prefix}{name} "))
        else:
            found.append((f"{prefix}{name}", command))
    return found


def _options(*names: str) -> list[tuple[str, click.Option]]:
    return [
        (path, param)
        for path, command in _commands()
        for param in command.params
        if isinstance(param, click.Option) and set(param.opts) & set(names)
    ]


def test_every_file_output_option_takes_out_and_output():
    found = _options("--out", "--output")
    assert {path for path, _ in found} >= {"plan", "import", "transactions list", "adjust"}
    for path, option in found:
        assert {"--out", "--output"} <= set(option.opts), path


def test_every_file_output_option_shows_file_as_the_readme_does():
    for path, option in _options("--out", "--output"):
        assert option.make_metavar(click.Context(cli)) == "FILE", path


def test_every_supplier_option_takes_supplier_and_supplier_ids():
    found = _options("--supplier", "--supplier-ids")
    assert {path for path, _ in found} == {"transactions list", "sandbox simulate"}
    for path, option in found:
        assert {"--supplier", "--supplier-ids"} <= set(option.opts), path


def test_every_supplier_option_is_shown_as_supplier_the_spelling_the_readme_gives():
    for path, option in _options("--supplier", "--supplier-ids"):
        assert option.opts[0] == "--supplier", path


def test_the_catalogue_refresh_is_refresh_catalog_everywhere():
    found = _options("--refresh-catalog")
    assert {path for path, _ in found} >= {"plan", "validate", "attributes"}
    for path, option in found:
        assert option.opts[0] == "--refresh-catalog", path


def test_refresh_alone_is_the_catalogue_except_terraforms_plan_refresh_false():
    for path, option in _options("--refresh"):
        if path == "plan":  # `plan --refresh=false`: plan against the state alone
            default = option.type_cast_value(click.Context(cli), option.default)
            assert option.type is click.BOOL and default is True
        else:
            assert option.opts[0] == "--refresh-catalog", path


@pytest.mark.parametrize("spelling", ["text", "table"])
def test_every_format_option_takes_both_names_of_the_format_for_people(spelling):
    found = _options("--format")
    assert len(found) >= 10
    for path, option in found:
        human = next(c for c in option.type.choices if c in ("text", "table"))
        assert option.type.convert(spelling, option, None) == human, path


def test_json_is_a_format_of_every_command_with_a_format():
    for path, option in _options("--format"):
        assert "json" in option.type.choices, path


@pytest.mark.parametrize(
    ("args", "hint"),
    [
        (["plna"], "No such command 'plna' (did you mean 'plan'?)."),
        (["state", "rn", "x"], "No such command 'rn' (did you mean 'rm'?)."),
        (["state", "lst"], "No such command 'lst' (did you mean 'list'?)."),  # said once
        (["transactions", "lsit", "1"], "No such command 'lsit' (did you mean 'list'?)."),
        (
            ["plan", "-out=change.plan"],
            "No such option '-out=change.plan'. Did you mean '--out=change.plan'?",
        ),  # fmt: skip
        (["plan", "-target", "Survey/x"], "No such option '-target'. Did you mean '--target'?"),
    ],
)
def test_a_misspelling_gets_did_you_mean(args, hint, tmp_path, monkeypatch):
    monkeypatch.chdir(tmp_path)
    result = CliRunner().invoke(cli, args)
    assert result.exit_code == 2
    assert result.stderr.splitlines()[-1] == f"Error: {hint}"


@pytest.mark.parametrize(
    "args",
    [["plan", "--json"], ["plan", "-json"], ["status", "--json"], ["show", "x.plan", "-json"]],
    ids=" ".join,
)
def test_a_json_flag_is_told_the_format_option_that_prints_json(args, tmp_path, monkeypatch):
    # `terraform plan -json` and many CLIs' `--json`: surveyctl spells it `--format json`,
    # which no "did you mean" would find from those words.
    monkeypatch.chdir(tmp_path)
    result = CliRunner().invoke(cli, args)
    assert result.exit_code == 2
    assert result.stderr.splitlines()[-1] == (
        f"Error: No such option {args[-1]!r}. Did you mean '--format json'?"
    )


def test_a_json_flag_on_a_command_without_json_output_is_offered_no_format():
    result = CliRunner().invoke(cli, ["state", "list", "--json"])
    assert result.exit_code == 2
    assert result.stderr.splitlines()[-1] == "Error: No such option '--json'."


@pytest.mark.parametrize(
    ("word", "meant"),
    [
        ("simulate", "'sandbox simulate'"),
        ("try-postgres", "'state try-postgres'"),
        ("list", "'state list', 'surveys list' or 'transactions list'"),
    ],
)
def test_a_group_command_typed_without_its_group_is_named_with_it(
    word, meant, tmp_path, monkeypatch
):
    monkeypatch.chdir(tmp_path)
    result = CliRunner().invoke(cli, [word])
    assert result.exit_code == 2
    assert result.stderr.splitlines()[-1] == (
        f"Error: No such command {word!r} (did you mean {meant}?)."
    )


def test_state_help_names_both_places_the_state_is_kept():
    shown = CliRunner().invoke(cli, ["state", "--help"]).output
    assert "local state" not in shown
    assert "in a file or PostgreSQL" in shown


@pytest.mark.parametrize(
    "args",
    [
        ["status", "0"],
        ["status", "99999999999999999999999"],
        ["transactions", "list", "0"],
        ["transactions", "get", "9223372036854775808", "T1"],
        ["import", "0", "--name", "x"],
        ["sandbox", "simulate", "0"],
        ["status", "--", "-5"],
    ],
    ids=" ".join,
)
def test_a_survey_id_out_of_range_is_a_usage_error_before_any_request(args, tmp_path, monkeypatch):
    monkeypatch.chdir(tmp_path)
    result = CliRunner().invoke(cli, args)
    assert result.exit_code == 2
    assert "is not in the range 1<=x<=9223372036854775807." in result.stderr
    assert not (tmp_path / ".surveyctl").exists()  # no embedded sandbox was started


@pytest.mark.parametrize("typed", ["-5", "-12"])
def test_a_negative_id_is_said_to_be_no_option_but_a_number_that_must_be_positive(
    typed, tmp_path, monkeypatch
):
    monkeypatch.chdir(tmp_path)
    result = CliRunner().invoke(cli, ["status", typed])
    assert result.exit_code == 2
    assert result.stderr.splitlines()[-1] == (
        f"Error: No such option '{typed}': an id is a positive number."
    )


@pytest.mark.parametrize(
    "args",
    [["status", "coffee-us"], ["transactions", "list", "coffee-us"], ["sandbox", "simulate", "x"]],
    ids=" ".join,
)
def test_a_name_where_a_survey_id_is_due_is_said_not_to_be_one(args, tmp_path, monkeypatch):
    monkeypatch.chdir(tmp_path)
    result = CliRunner().invoke(cli, args)
    assert result.exit_code == 2
    assert result.stderr.splitlines()[-1].endswith(
        f"{args[-1]!r} is not a survey id: a ps_survey_id is a whole number, and "
        "`surveyctl state list` shows those of the surveys surveyctl manages"
    )


MANAGED = """\
kind: Survey
name: coffee-us
spec:
  survey_title: Coffee US (name where an id is due)
  survey_category_code: 231
  survey_localization: en_US
  completes_required: 100
  expected_ir: 50
  expected_loi: 10
  offer_price: 2.5
  field_time: 10
  live_url: https://survey.example.com/s?tid=[%%transaction_id%%]
"""


def test_the_name_of_a_managed_survey_where_its_id_is_due_is_told_its_id(run_cli, project):
    (project / "coffee-us.yaml").write_text(MANAGED, encoding="utf-8")
    assert run_cli("apply", "coffee-us.yaml", "--auto-approve").exit_code == 0
    survey_id = json.loads(run_cli("state", "show", "coffee-us").stdout)["ps_survey_id"]
    result = run_cli("status", "coffee-us", "paused")
    assert result.exit_code == 2
    assert result.stderr.splitlines()[-1].endswith(
        "'coffee-us' is not a survey id but a manifest's name: Survey/coffee-us is "
        f"ps_survey_id {survey_id} in the state of environment 'local'; give {survey_id}"
    )
