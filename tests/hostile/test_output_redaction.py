"""What the service says on success passes the redaction too: a survey title holding the API key
(a buyer once pasted it there) is shown, exported and saved as `[redacted]`, never as the key
in any spelling `redact` knows, and a saved plan of it still applies.

The key is a real key of the sandbox here (buyer 1's, under another name), so every command
talks to the marketplace over HTTP with it.
"""

from __future__ import annotations

import csv
import io
import os
import select
import stat
import subprocess
import sys

import pytest
from rich.console import Console

from surveyctl.api.secrets import REDACTED
from surveyctl.state import FileStateStore
from surveyctl.statuses import LIVE

from ..conftest import BUYER_1_KEY
from ..processes import environment, surveyctl
from .conftest import survey_manifest, survey_title
from .test_stream_redaction import SECRET, SPELLINGS

PLAN = "change.plan"


@pytest.fixture
def keyed(project, sandbox, monkeypatch) -> str:
    """The CLI acts for buyer 1 with SECRET as its key."""
    sandbox.accounts.keys[SECRET] = sandbox.accounts.keys[BUYER_1_KEY]
    monkeypatch.setenv("SURVEYCTL_LOCAL_KEY", SECRET)
    return SECRET


@pytest.fixture
def titled(keyed, api) -> int:
    """A survey of the account, unmanaged, whose title holds the key."""
    body = {**survey_manifest("pasted")["spec"], "survey_title": f"Tracker {SECRET} wave 2"}
    return api.create_survey(body)["ps_survey_id"]


@pytest.fixture
def drifted(keyed, manifests, api, run_cli) -> int:
    """A managed survey whose live title was changed, elsewhere, to hold the key: the plan
    shows the title going back, old value and all."""
    manifests.write(survey_manifest("tracker"))
    applied = run_cli("apply", "manifests", "--auto-approve")
    assert applied.exit_code == 0, applied.stderr
    survey_id = _managed_id(manifests.folder.parent, "tracker")
    title = [{"op": "replace", "path": "/survey_title", "value": f"Tracker {SECRET}"}]
    api.patch_survey(survey_id, title)
    return survey_id


def _managed_id(project, name: str) -> int:
    store = FileStateStore(project / ".surveyctl" / "state" / "local.json")
    return store.load().survey(name).ps_survey_id


def _leaks(text: str) -> list[str]:
    return [spelling for spelling in SPELLINGS if spelling in text]


def test_surveys_list_shows_a_title_holding_the_key_redacted(titled, run_cli):
    result = run_cli("surveys", "list")
    assert result.exit_code == 0, result.stderr
    assert f"Tracker {REDACTED} wave 2" in result.stdout
    assert _leaks(result.stdout + result.stderr) == []


@pytest.mark.parametrize("output_format", ["json", "csv", "tsv"])
def test_surveys_list_in_each_format_carries_no_spelling_of_the_key(titled, run_cli, output_format):
    result = run_cli("surveys", "list", "--format", output_format)
    assert result.exit_code == 0, result.stderr
    assert REDACTED in result.stdout
    assert _leaks(result.stdout + result.stderr) == []


def test_the_fieldwork_of_a_survey_shows_its_title_redacted(titled, run_cli):
    result = run_cli("status", str(titled))
    assert result.exit_code == 0, result.stderr
    assert REDACTED in result.stdout
    assert _leaks(result.stdout + result.stderr) == []


@pytest.mark.parametrize("output_format", ["text", "json", "markdown"])
def test_a_plan_shows_a_live_title_holding_the_key_redacted(drifted, run_cli, output_format):
    result = run_cli("plan", "manifests", "--format", output_format)
    assert result.exit_code == 0, result.stderr
    assert REDACTED in result.stdout
    assert _leaks(result.stdout + result.stderr) == []


def test_a_saved_plan_file_carries_no_spelling_of_the_key(drifted, project, run_cli):
    saved = run_cli("plan", "manifests", "--out", PLAN)
    assert saved.exit_code == 0, saved.stderr
    text = (project / PLAN).read_text(encoding="utf-8")
    assert REDACTED in text
    assert _leaks(text) == []


def test_show_of_a_saved_plan_shows_the_title_redacted_without_a_key_at_hand(
    drifted, project, run_cli
):
    assert run_cli("plan", "manifests", "--out", PLAN).exit_code == 0
    # `show` reads the file alone: a process of its own, without the key, knows no secret.
    shown = surveyctl(project, "show", PLAN, env={"SURVEYCTL_LOCAL_KEY": ""})
    out, err = shown.communicate(timeout=60)
    assert shown.returncode == 0, err
    assert REDACTED in out
    assert _leaks(out + err) == []


def test_a_saved_plan_with_a_redacted_title_applies_and_restores_the_title(
    drifted, project, api, run_cli
):
    assert run_cli("plan", "manifests", "--out", PLAN).exit_code == 0
    result = run_cli("apply", PLAN)
    assert result.exit_code == 0, result.stderr
    assert api.get_survey(drifted)["survey_title"] == survey_title("tracker")
    assert _leaks(result.stdout + result.stderr) == []


def test_a_plan_whose_manifest_holds_the_key_is_not_saved(keyed, manifests, project, run_cli):
    manifests.write(survey_manifest("tracker", survey_title=f"Tracker {SECRET}"))
    result = run_cli("plan", "manifests", "--out", PLAN)
    assert result.exit_code == 1
    assert (
        f"cannot save the plan to {PLAN}: the body of Survey/tracker holds the API key"
        in result.stderr
    )
    assert not (project / PLAN).exists()
    assert _leaks(result.stdout + result.stderr) == []


@pytest.mark.parametrize("output_format", ["csv", "json", "jsonl"])
def test_a_transactions_export_carries_the_title_redacted(
    titled, api, project, run_cli, output_format
):
    api.set_survey_status(titled, LIVE)
    api.simulate_traffic(titled, {"respondents": 5, "seed": 7})
    result = run_cli(
        "transactions", "list", str(titled), "--format", output_format, "--output", "t.out"
    )
    assert result.exit_code == 0, result.stderr
    text = (project / "t.out").read_text(encoding="utf-8")
    assert f"Tracker {REDACTED} wave 2" in text
    assert _leaks(text + result.stdout + result.stderr) == []


def test_a_transactions_export_to_stdout_carries_the_title_redacted(titled, api, run_cli):
    api.set_survey_status(titled, LIVE)
    api.simulate_traffic(titled, {"respondents": 5, "seed": 7})
    result = run_cli("transactions", "list", str(titled), "--format", "csv")
    assert result.exit_code == 0, result.stderr
    rows = list(csv.DictReader(result.stdout.splitlines()))
    assert {row["Project Name"] for row in rows} == {f"Tracker {REDACTED} wave 2"}


def test_every_file_of_the_state_is_private_whatever_the_umask(project, manifests, run_cli, keyed):
    previous = os.umask(0)
    try:
        manifests.write(survey_manifest("tracker"))
        assert run_cli("apply", "manifests", "--auto-approve").exit_code == 0
        manifests.write(survey_manifest("tracker", completes_required=300))
        assert run_cli("apply", "manifests", "--auto-approve").exit_code == 0
    finally:
        os.umask(previous)
    folder = project / ".surveyctl" / "state"
    # The lock's guard file is empty: it holds nothing to read.
    held = [path for path in folder.iterdir() if path.stat().st_size > 0]
    modes = {path.name: stat.S_IMODE(path.stat().st_mode) for path in held}
    assert "local.history.jsonl" in modes and "local.json" in modes
    assert {name: mode for name, mode in modes.items() if mode != 0o600} == {}


def test_apply_refuses_a_manifest_holding_the_key_and_sends_nothing(
    keyed, manifests, project, api, run_cli
):
    manifests.write(survey_manifest("tracker", survey_title=f"Tracker {SECRET}"))
    result = run_cli("apply", "manifests", "--auto-approve")
    assert result.exit_code == 1
    assert "Survey/tracker" in result.stderr + result.stdout
    assert "holds the API key" in result.stderr + result.stdout
    assert api.list_surveys() == []
    assert not (project / ".surveyctl" / "state" / "local.json").exists()


def test_a_table_on_a_narrow_terminal_shows_no_piece_of_the_key():
    from surveyctl.api.secrets import remember
    from surveyctl.cli.console import plain_table

    remember(SECRET)
    table = plain_table()
    table.add_column("title")
    table.add_row(f"Tracker {SECRET} wave 2")
    narrow = Console(file=io.StringIO(), width=12, color_system=None)
    narrow.print(table)
    shown = narrow.file.getvalue()
    assert "[redact" in shown
    assert [piece for piece in ("sk-live", "7f3c", "9a1e5b2d4c6e") if piece in shown] == []


def test_a_piped_table_lays_out_each_cell_redacted():
    from surveyctl.api.secrets import remember
    from surveyctl.cli.console import console, plain_table

    remember(SECRET)
    table = plain_table()
    table.add_column("title")
    table.add_column("id")
    table.add_row(f"Tracker {SECRET} wave 2", "10001")
    piped = io.StringIO()
    console(piped).print(table)
    title, row = piped.getvalue().splitlines()
    assert row == f"Tracker {REDACTED} wave 2  10001"
    assert title == "title" + " " * (len(row) - len("title") - len("  10001")) + "  id"


def test_a_title_holding_the_state_database_password_is_shown_redacted(
    project, sandbox, postgres, api, run_cli, monkeypatch
):
    monkeypatch.setenv("SURVEYCTL_STATE_DSN", postgres.dsn())
    state = (
        f"{{backend: postgres, dsn_env: SURVEYCTL_STATE_DSN, schema: {postgres.fresh_schema()}}}"
    )
    (project / "surveyctl.yaml").write_text(
        "environments:\n"
        f"  local: {{host: '{sandbox.url}', api_key_env: SURVEYCTL_LOCAL_KEY, state: {state}}}\n"
        "default_environment: local\n",
        encoding="utf-8",
    )
    body = {**survey_manifest("pasted")["spec"], "survey_title": f"Tracker {postgres.password}"}
    api.create_survey(body)
    result = run_cli("surveys", "list")
    assert result.exit_code == 0, result.stderr
    assert f"Tracker {REDACTED}" in result.stdout
    assert postgres.password not in result.stdout + result.stderr


def test_state_show_prints_a_recorded_title_holding_the_key_redacted(titled, project, run_cli):
    # An import records the live body as last applied: the state holds the key, 0600, and
    # `state show`, which makes no client, still knows the key to take out (a process of its
    # own: this one remembers every key its clients had).
    imported = run_cli("import", str(titled), "--name", "pasted", "--out", "pasted.yaml")
    assert imported.exit_code == 0, imported.stderr
    shown = surveyctl(project, "state", "show", "Survey/pasted")
    out, err = shown.communicate(timeout=60)
    assert shown.returncode == 0, err
    assert f"Tracker {REDACTED} wave 2" in out
    assert _leaks(out + err) == []


def test_a_transactions_export_is_private_whatever_the_umask(titled, api, project, run_cli):
    api.set_survey_status(titled, LIVE)
    api.simulate_traffic(titled, {"respondents": 3, "seed": 7})
    previous = os.umask(0)
    try:
        result = run_cli("transactions", "list", str(titled), "--format", "csv", "--out", "t.csv")
    finally:
        os.umask(previous)
    assert result.exit_code == 0, result.stderr
    assert stat.S_IMODE((project / "t.csv").stat().st_mode) == 0o600


def test_a_history_an_earlier_surveyctl_left_readable_by_others_is_made_private(
    project, manifests, run_cli, keyed
):
    manifests.write(survey_manifest("tracker"))
    assert run_cli("apply", "manifests", "--auto-approve").exit_code == 0
    history = project / ".surveyctl" / "state" / "local.history.jsonl"
    history.chmod(0o644)
    manifests.write(survey_manifest("tracker", completes_required=300))
    assert run_cli("apply", "manifests", "--auto-approve").exit_code == 0
    assert stat.S_IMODE(history.stat().st_mode) == 0o600


def test_apply_shows_its_question_before_it_reads_the_answer(keyed, manifests, project):
    manifests.write(survey_manifest("asked"))
    leader, follower = os.openpty()
    process = surveyctl(project, "apply", "manifests", stdin=follower, text=False)
    os.close(follower)
    try:
        shown = b""
        while not shown.endswith(b"Only 'yes' will be accepted: "):
            ready, _, _ = select.select([process.stderr], [], [], 30)
            assert ready, shown.decode()  # the question never came whole: apply would wait
            chunk = os.read(process.stderr.fileno(), 4096)
            assert chunk, shown.decode()
            shown += chunk
        os.write(leader, b"no\n")
        process.communicate(timeout=60)
    finally:
        os.close(leader)
    assert process.returncode == 1


# A command whose last line is cut short by the way it ends, in a process of its own: the
# line ends with what could begin the key (`sk-`), so the streams hold it back until the end.
_CUT_SHORT = """
import os, signal, sys
from surveyctl import signals
from surveyctl.api.secrets import remember
from surveyctl.cli.streams import redacting
from surveyctl.redacting import RedactingWriter

remember({secret!r})
signals.stop_like_ctrl_c()
how = sys.argv[1]
if how == "a writer never closed":
    RedactingWriter(sys.stdout).write("Renaming Tracker to sk-")
    sys.exit(0)
with redacting():
    sys.stdout.write("Renaming Tracker to sk-")
    sys.stdout.flush()
    if how == "SystemExit":
        sys.exit(3)
    if how == "KeyboardInterrupt":
        raise KeyboardInterrupt
    if how == "SIGTERM":
        os.kill(os.getpid(), signal.SIGTERM)
"""


@pytest.mark.parametrize(
    "how", ["the end", "SystemExit", "KeyboardInterrupt", "SIGTERM", "a writer never closed"]
)
def test_a_line_cut_short_with_no_secret_is_not_lost_at_exit(tmp_path, how):
    ended = subprocess.run(
        [sys.executable, "-c", _CUT_SHORT.format(secret=SECRET), how],
        capture_output=True,
        text=True,
        timeout=60,
        env=environment(),
    )
    assert ended.stdout == "Renaming Tracker to sk-", ended.stderr
