"""`surveyctl status SURVEY_ID NEW_STATUS` and `transactions set-status` leave a record in the
environment's history: who moved which survey or set which transaction's status, when, from
what to what, what they were told it costs, and how it ended. Over real HTTP against the
sandbox, with the state on the file and on PostgreSQL."""

from __future__ import annotations

import json
import signal
import threading
from pathlib import Path

import pytest
from click.testing import CliRunner
from werkzeug.wrappers import Request

from surveyctl.cli.main import cli
from surveyctl.config import load_config
from surveyctl.state import SurveyRecord, open_state
from surveyctl.state.status_changes import MADE, StatusSet

from ..api.conftest import SURVEY
from ..processes import surveyctl
from ..reconcile.proxies import HoldingProxy, Proxy
from .conftest import DSN_VARIABLE, local_project

DRAFT, LIVE, PAUSED, IN_SURVEY, COMPLETE = 11, 22, 33, 16, 21


@pytest.fixture
def project(tmp_path: Path, sandbox, monkeypatch, state_setting) -> Path:
    """The `local` environment on the session sandbox, its state in the backend under test."""
    monkeypatch.setenv("SURVEYCTL_ACTOR", "ann")
    return local_project(tmp_path, sandbox.url, state_setting, monkeypatch)


@pytest.fixture
def new_survey(api):
    """`new_survey(live=False)`: a survey of buyer 1 (1,000 completes at $2.50); its id."""

    def make(live: bool = False) -> int:
        body = {**SURVEY, "completes_required": 1000, "offer_price": 2.5}
        survey_id = api.create_survey(body)["ps_survey_id"]
        if live:
            api.set_survey_status(survey_id, LIVE)
        return survey_id

    return make


@pytest.fixture
def held(api):
    """`held(survey_id)`: the id of a respondent stopped in the buyer's survey."""

    def make(survey_id: int) -> str:
        api.simulate_traffic(survey_id, {"respondents": 5, "seed": 2, "hold": True})
        page, _ = api.get_transactions_page(survey_id, status=[IN_SURVEY], limit=1000)
        return page[0]["Transaction ID"]

    return make


def open_local(project: Path):
    config = load_config(project / "surveyctl.yaml")
    return open_state(config, config.environment("local"))


def history(run_cli, *name: str) -> list[dict]:
    result = run_cli("state", "history", *name, "--format", "json")
    assert result.exit_code == 0, result.stderr
    return json.loads(result.stdout)


def test_a_launch_is_recorded_and_state_history_shows_who_what_and_its_cost(
    run_cli, api, new_survey
):
    survey_id = new_survey()
    moved = run_cli("status", str(survey_id), "live", "--yes")
    assert moved.exit_code == 0, moved.stderr
    table = run_cli("state", "history")
    assert table.exit_code == 0, table.stderr
    header, row = table.stdout.splitlines()
    assert header.split() == ["SERIAL", "WHEN", "WHO", "COMMAND", "ADDRESS", "CHANGE"]
    serial, when, who, command, address, change = row.split(maxsplit=5)
    assert (serial, who, command, address) == ("-", "ann", "status", "-")
    assert when.endswith("+00:00")
    assert change == (
        f"survey {survey_id}: draft (11) -> live (22), made; said to cost up to $2,500.00 in "
        "US dollars"
    )


def test_a_recorded_move_as_json_names_the_survey_the_statuses_and_the_outcome(run_cli, new_survey):
    survey_id = new_survey(live=True)
    assert run_cli("status", str(survey_id), "paused", "--yes").exit_code == 0
    (entry,) = history(run_cli)
    assert entry["survey_id"] == survey_id and entry["transaction_id"] is None
    assert (entry["from"], entry["to"], entry["outcome"]) == (LIVE, PAUSED, "made")
    assert entry["cost"] is None  # a pause spends nothing
    assert (entry["serial"], entry["address"], entry["command"]) == (None, None, "status")


def test_a_managed_surveys_move_is_listed_under_its_address_without_moving_the_serial(
    run_cli, project, new_survey
):
    survey_id = new_survey()
    store = open_local(project)
    serial = store.record("Survey/brand-tracker-us", SurveyRecord(survey_id))
    store.close()
    assert run_cli("status", str(survey_id), "live", "--yes").exit_code == 0
    entries = history(run_cli, "brand-tracker-us")
    assert [(e["serial"], e["change"]) for e in entries][0] == (serial, "added")
    moved = entries[1]
    assert moved["address"] == "Survey/brand-tracker-us" and moved["after_serial"] == serial
    store = open_local(project)
    assert store.load().serial == serial  # a saved plan stays valid
    store.close()


def test_a_no_records_nothing(run_cli, api, new_survey, monkeypatch):
    survey_id = new_survey()
    monkeypatch.setattr("surveyctl.cli.confirm.terminal", lambda: True)
    declined = run_cli("status", str(survey_id), "live", input="n\n")
    assert declined.exit_code == 1
    assert api.get_survey(survey_id)["ps_survey_status"] == DRAFT
    assert history(run_cli) == []


def test_a_refused_move_records_nothing(run_cli, new_survey):
    survey_id = new_survey()
    refused = run_cli("status", str(survey_id), "closed", "--yes")
    assert refused.exit_code == 1 and "cannot move to closed directly" in refused.stderr
    assert history(run_cli) == []


def test_a_move_that_was_not_needed_records_nothing(run_cli, new_survey):
    survey_id = new_survey(live=True)
    already = run_cli("status", str(survey_id), "live", "--yes")
    assert already.exit_code == 0 and "already" in already.stdout
    assert history(run_cli) == []


def test_set_status_is_recorded_with_the_transaction_its_outcome_and_what_it_pays(
    run_cli, api, new_survey, held
):
    survey_id = new_survey(live=True)
    transaction_id = held(survey_id)
    price = api.get_transaction(survey_id, transaction_id)["Expected Buyer CPI"]
    result = run_cli("transactions", "set-status", str(survey_id), transaction_id,
                     "--status", "complete", "--yes")  # fmt: skip
    assert result.exit_code == 0, result.stderr
    (entry,) = history(run_cli)
    assert entry["command"] == "transactions set-status" and entry["who"] == "ann"
    assert (entry["survey_id"], entry["transaction_id"]) == (survey_id, transaction_id)
    assert (entry["from"], entry["to"], entry["outcome"]) == (IN_SURVEY, COMPLETE, "made")
    assert entry["cost"] == (
        f"${float(price):,.2f} in US dollars (the transaction's Expected Buyer CPI)"
    )
    assert entry["change"].startswith(
        f"transaction {transaction_id} of survey {survey_id}: in progress on the buyer survey "
        "(16) -> complete (21), made; said to cost $"
    )


class _LosingProxy(Proxy):
    """Forwards everything; the answer of a status call that was made is replaced by a 502,
    as a gateway that lost the service's answer gives it; with `lose_reads_after`, so are
    the answers of every read after it (nothing can be read back)."""

    lose_reads_after = False
    lost = False

    def reshape(self, request: Request, answer, headers: dict) -> bytes:
        status_call = request.method in ("POST", "PUT") and request.path.endswith("/status")
        self.lost = self.lost or status_call
        if status_call or (self.lose_reads_after and self.lost and request.method == "GET"):
            answer.status_code = 502
            headers["Content-Type"] = "text/plain"
            return b"bad gateway"
        return answer.content


def through_losing_proxy(run_cli, sandbox, project, state_setting, monkeypatch, *args, reads=False):
    """`surveyctl ARGS` through a proxy that loses the status call's answer (and, with
    `reads`, every read after it)."""
    proxy = _LosingProxy(sandbox.url)
    proxy.lose_reads_after = reads
    try:
        local_project(project, proxy.url, state_setting, monkeypatch)
        return run_cli(*args)
    finally:
        proxy.stop()
        local_project(project, sandbox.url, state_setting, monkeypatch)


def test_set_status_whose_answer_was_lost_is_recorded_as_made_though_lost(
    run_cli, new_survey, held, sandbox, project, state_setting, monkeypatch
):
    survey_id = new_survey(live=True)
    transaction_id = held(survey_id)
    result = through_losing_proxy(
        run_cli, sandbox, project, state_setting, monkeypatch,
        "transactions", "set-status", str(survey_id), transaction_id, "--status", "18", "--yes",
    )  # fmt: skip
    assert result.exit_code == 0, result.stderr
    (entry,) = history(run_cli)
    assert (entry["to"], entry["outcome"]) == (18, "made_answer_lost")
    assert entry["change"].endswith("made though its answer was lost")


def test_a_move_that_cannot_be_read_back_is_recorded_as_may_have_been_made(
    run_cli, new_survey, sandbox, project, state_setting, monkeypatch
):
    survey_id = new_survey()
    result = through_losing_proxy(
        run_cli, sandbox, project, state_setting, monkeypatch,
        "status", str(survey_id), "live", "--yes", reads=True,
    )  # fmt: skip
    assert result.exit_code == 1
    assert "could not be read back" in result.stderr.splitlines()[-1]
    (entry,) = history(run_cli)
    assert (entry["to"], entry["outcome"]) == (LIVE, "may_have_been_made")
    assert entry["change"].endswith(
        "may have been made; said to cost up to $2,500.00 in US dollars"
    )


def unrecordable(project: Path, backend: str, monkeypatch, postgres=None) -> None:
    """Makes the history of `local` impossible to write: for the file, a folder where the
    history file belongs; for PostgreSQL, a login the server refuses."""
    if backend == "file":
        (project / ".surveyctl" / "state" / "local.history.jsonl").mkdir(parents=True)
    else:
        monkeypatch.setenv(DSN_VARIABLE, postgres.dsn(password="not-the-password"))


@pytest.fixture
def cannot_record(project, backend, monkeypatch, request):
    postgres = request.getfixturevalue("postgres") if backend == "postgres" else None
    return lambda: unrecordable(project, backend, monkeypatch, postgres)


def test_a_move_that_cannot_be_recorded_says_it_was_made_and_not_recorded(
    run_cli, api, new_survey, cannot_record
):
    survey_id = new_survey()
    cannot_record()
    result = run_cli("status", str(survey_id), "live", "--yes")
    assert api.get_survey(survey_id)["ps_survey_status"] == LIVE
    assert result.exit_code == 1
    assert f"survey {survey_id} is live (22)" in result.stdout
    last = result.stderr.splitlines()[-1]
    assert last.startswith(
        f"Error: survey {survey_id} was moved to live, but the move is not in the history of "
        "environment 'local': "
    )
    assert "not-the-password" not in result.stderr and "Traceback" not in result.stderr


def test_a_set_status_that_cannot_be_recorded_says_it_is_set_and_not_recorded(
    run_cli, api, new_survey, held, cannot_record
):
    survey_id = new_survey(live=True)
    transaction_id = held(survey_id)
    cannot_record()
    result = run_cli("transactions", "set-status", str(survey_id), transaction_id,
                     "--status", "18", "--yes")  # fmt: skip
    assert api.get_transaction(survey_id, transaction_id)["Respondent Status Code"] == 18
    assert result.exit_code == 1
    assert f"Recorded: transaction {transaction_id} has status 18." in result.stdout
    assert result.stderr.splitlines()[-1].startswith(
        f"Error: transaction {transaction_id} of survey {survey_id} has status 18, but that is "
        "not in the history of environment 'local': "
    )


def test_a_move_is_recorded_while_another_command_holds_the_state_lock(
    run_cli, project, new_survey
):
    survey_id = new_survey()
    holder = open_local(project)
    with holder.locked("apply"):
        result = run_cli("status", str(survey_id), "live", "--yes")
    holder.close()
    assert result.exit_code == 0, result.stderr
    assert [e["outcome"] for e in history(run_cli)] == ["made"]


def test_a_move_made_before_the_environment_had_a_state_stays_in_its_history(
    run_cli, project, new_survey
):
    survey_id = new_survey()
    assert run_cli("status", str(survey_id), "live", "--yes").exit_code == 0
    store = open_local(project)
    store.record("Survey/brand-tracker-us", SurveyRecord(survey_id))  # the first write
    store.close()
    entries = history(run_cli)
    assert [(e["serial"], e["change"].split(":")[0]) for e in entries] == [
        (None, f"survey {survey_id}"),
        (1, "added"),
    ]


def migrate_project(folder: Path, backend: str, schema: str) -> None:
    state = (
        f", state: {{backend: postgres, dsn_env: {DSN_VARIABLE}, schema: {schema}}}"
        if backend == "postgres"
        else ""
    )
    (folder / "surveyctl.yaml").write_text(
        "environments:\n"
        f"  staging: {{host: 'https://staging.invalid', api_key_env: STAGING_KEY{state}}}\n"
        "default_environment: staging\n",
        encoding="utf-8",
    )


def cli_runner(*args: str):
    return CliRunner().invoke(cli, list(args), catch_exceptions=False)


def test_a_migration_carries_status_changes_each_way_once(tmp_path, monkeypatch, postgres):
    monkeypatch.setenv(DSN_VARIABLE, postgres.dsn())
    monkeypatch.delenv("SURVEYCTL_ENV", raising=False)
    monkeypatch.chdir(tmp_path)
    schema = postgres.fresh_schema()

    def staging():
        config = load_config(tmp_path / "surveyctl.yaml")
        return open_state(config, config.environment("staging"))

    def moves() -> list[int]:
        result = cli_runner("state", "history", "--format", "json")
        assert result.exit_code == 0, result.stderr
        return [e["survey_id"] for e in json.loads(result.stdout) if e["serial"] is None]

    migrate_project(tmp_path, "file", schema)
    store = staging()
    store.record("Survey/tracker", SurveyRecord(4711))
    store.record_status("status", StatusSet(4711, LIVE, MADE, from_status=DRAFT))
    migrate_project(tmp_path, "postgres", schema)
    assert cli_runner("state", "migrate", "--from", "file").exit_code == 0
    store = staging()
    store.record_status("status", StatusSet(4711, PAUSED, MADE, from_status=LIVE))
    store.close()
    assert moves() == [4711, 4711]
    migrate_project(tmp_path, "file", schema)
    back = cli_runner("state", "migrate", "--from", "postgres", "--schema", schema)
    assert back.exit_code == 0, back.stderr
    assert moves() == [4711, 4711]  # the one made in PostgreSQL added, the first kept once


def test_a_migration_says_how_many_status_changes_it_added(tmp_path, monkeypatch, postgres):
    monkeypatch.setenv(DSN_VARIABLE, postgres.dsn())
    monkeypatch.delenv("SURVEYCTL_ENV", raising=False)
    monkeypatch.chdir(tmp_path)
    schema = postgres.fresh_schema()
    migrate_project(tmp_path, "file", schema)
    config = load_config(tmp_path / "surveyctl.yaml")
    store = open_state(config, config.environment("staging"))
    store.record("Survey/tracker", SurveyRecord(4711))
    store.record_status("status", StatusSet(4711, LIVE, MADE, from_status=DRAFT))
    store.record_status("status", StatusSet(4711, PAUSED, MADE, from_status=LIVE))
    store.close()
    migrate_project(tmp_path, "postgres", schema)
    moved = cli_runner("state", "migrate", "--from", "file")
    assert moved.exit_code == 0, moved.stderr
    assert "1 change(s) of history, 2 status change(s) added)" in moved.stdout
    again = cli_runner("state", "migrate", "--from", "file")
    assert again.exit_code == 0, again.stderr
    assert "0 status change(s) added); nothing to copy" in again.stdout


def test_a_status_change_line_is_refused_as_newer_by_a_reader_of_writes_alone():
    # A surveyctl from before status changes reads every history line as a write: it must
    # refuse this one (and say to upgrade), not show or copy it as a change of a record.
    from surveyctl.state.changes import Change
    from surveyctl.state.records import NewerState
    from surveyctl.state.status_changes import StatusChange

    line = StatusChange("", 0, "2026-11-29T21:00:00+00:00", "ann", "status", None,
                        StatusSet(4711, LIVE, MADE, from_status=DRAFT)).to_json()  # fmt: skip
    with pytest.raises(NewerState, match="upgrade surveyctl"):
        Change.from_json(line, "staging.history.jsonl:1")


def test_state_at_a_serial_is_rebuilt_without_the_status_changes_after_it(
    run_cli, project, new_survey
):
    survey_id = new_survey()
    store = open_local(project)
    store.record("Survey/brand-tracker-us", SurveyRecord(survey_id))
    assert run_cli("status", str(survey_id), "live", "--yes").exit_code == 0  # after serial 1
    store.record("Survey/other", SurveyRecord(survey_id + 100000))
    store.close()
    shown = run_cli("state", "show", "brand-tracker-us", "--serial", "1")
    assert shown.exit_code == 0, shown.stderr
    assert json.loads(shown.stdout)["ps_survey_id"] == survey_id


def test_a_record_holds_neither_the_api_key_nor_the_connection_string(
    run_cli, project, new_survey, held, backend, request
):
    survey_id = new_survey(live=True)
    transaction_id = held(survey_id)
    assert run_cli("status", str(survey_id), "paused", "--yes").exit_code == 0
    assert run_cli("transactions", "set-status", str(survey_id), transaction_id,
                   "--status", "21", "--yes").exit_code == 0  # fmt: skip
    store = open_local(project)
    kept = json.dumps([change.to_json() for change in store.status_changes()])
    store.close()
    assert len(json.loads(kept)) == 2
    assert "sandbox-buyer-1" not in kept
    if backend == "postgres":
        postgres = request.getfixturevalue("postgres")
        assert postgres.password not in kept and postgres.socket_dir not in kept


def test_an_actor_the_history_cannot_keep_is_refused_before_the_move(
    run_cli, api, new_survey, monkeypatch
):
    survey_id = new_survey()
    monkeypatch.setenv("SURVEYCTL_ACTOR", "ann\nbob")
    result = run_cli("status", str(survey_id), "live", "--yes")
    assert result.exit_code == 1 and "SURVEYCTL_ACTOR" in result.stderr
    assert api.get_survey(survey_id)["ps_survey_status"] == DRAFT


def test_a_launch_the_marketplace_pauses_at_once_is_recorded_as_made(run_cli, api):
    quotas = [{**quota, "required_count": 0} for quota in SURVEY["quotas"]]
    survey_id = api.create_survey({**SURVEY, "quotas": quotas})["ps_survey_id"]
    assert api.set_survey_status(survey_id, LIVE)["ps_survey_status"] == PAUSED  # spec 1.5
    result = run_cli("status", str(survey_id), "live", "--yes")
    assert result.exit_code == 1 and "did not stay live" in result.stderr
    assert [(e["from"], e["to"], e["outcome"]) for e in history(run_cli)] == [
        (PAUSED, LIVE, "made")
    ]


def test_status_changes_recorded_while_a_command_writes_and_folds_the_state_all_stay(project):
    # Appended without the state lock while another command's writes are folded into the
    # history (the file backend, at the end of each locked command): none is cut or lost.
    writes = 20
    failures: list[BaseException] = []

    def write() -> None:
        writer = open_local(project)
        try:
            for number in range(writes):
                with writer.locked("apply"):
                    writer.record(f"Survey/s-{number}", SurveyRecord(50000 + number))
        except BaseException as exc:  # seen by the assertion below
            failures.append(exc)
        finally:
            writer.close()

    thread = threading.Thread(target=write)
    thread.start()
    recorder = open_local(project)
    for number in range(writes):
        recorder.record_status("status", StatusSet(60000 + number, LIVE, MADE))
    thread.join()
    assert failures == []
    entries = recorder.history()
    recorder.close()
    assert sorted(e.status.what.survey_id for e in entries if e.status) == [
        60000 + number for number in range(writes)
    ]
    assert [e.serial for e in entries if e.status is None] == list(range(1, writes + 1))


class _HoldingStatusCalls(HoldingProxy):
    """Holds each status call a while before forwarding it; `arrived` is set when one comes."""

    held_s = 1.5

    def __init__(self, upstream: str):
        self.came = threading.Event()
        super().__init__(upstream)

    def holds(self, environ) -> bool:
        return environ["REQUEST_METHOD"] in ("PUT", "POST") and environ["PATH_INFO"].endswith(
            "/status"
        )

    def arrived(self, environ) -> None:
        self.came.set()


@pytest.mark.parametrize("number", [signal.SIGINT, signal.SIGTERM])
def test_a_signal_while_a_move_is_in_flight_waits_for_it_and_records_it(
    run_cli, api, new_survey, sandbox, project, state_setting, monkeypatch, number
):
    survey_id = new_survey()
    proxy = _HoldingStatusCalls(sandbox.url)
    try:
        local_project(project, proxy.url, state_setting, monkeypatch)
        process = surveyctl(project, "status", str(survey_id), "live", "--yes")
        assert proxy.came.wait(30), process.communicate()
        process.send_signal(number)
        out, err = process.communicate(timeout=60)
    finally:
        proxy.stop()
        local_project(project, sandbox.url, state_setting, monkeypatch)
    assert process.returncode == 128 + number, err
    assert "received: the status change in flight is answered and recorded" in err
    assert f"survey {survey_id} is live (22)" in out
    assert api.get_survey(survey_id)["ps_survey_status"] == LIVE
    assert [e["outcome"] for e in history(run_cli)] == ["made"]


def test_set_status_whose_answer_was_lost_and_not_read_back_is_recorded_as_may_have_been_made(
    run_cli, new_survey, held, sandbox, project, state_setting, monkeypatch
):
    survey_id = new_survey(live=True)
    transaction_id = held(survey_id)
    result = through_losing_proxy(
        run_cli, sandbox, project, state_setting, monkeypatch,
        "transactions", "set-status", str(survey_id), transaction_id, "--status", "20", "--yes",
        reads=True,
    )  # fmt: skip
    assert result.exit_code == 1
    assert "may have been recorded" in result.stderr.splitlines()[-1]
    (entry,) = history(run_cli)
    assert (entry["transaction_id"], entry["to"]) == (transaction_id, 20)
    assert entry["outcome"] == "may_have_been_made"


def test_a_signal_while_a_final_status_is_in_flight_waits_for_it_and_records_it(
    run_cli, api, new_survey, held, sandbox, project, state_setting, monkeypatch
):
    survey_id = new_survey(live=True)
    transaction_id = held(survey_id)
    proxy = _HoldingStatusCalls(sandbox.url)
    try:
        local_project(project, proxy.url, state_setting, monkeypatch)
        process = surveyctl(project, "transactions", "set-status", str(survey_id),
                            transaction_id, "--status", "18", "--yes")  # fmt: skip
        assert proxy.came.wait(30), process.communicate()
        process.send_signal(signal.SIGINT)
        out, err = process.communicate(timeout=60)
    finally:
        proxy.stop()
        local_project(project, sandbox.url, state_setting, monkeypatch)
    assert process.returncode == 130, err
    assert f"Recorded: transaction {transaction_id} has status 18." in out
    assert api.get_transaction(survey_id, transaction_id)["Respondent Status Code"] == 18
    assert [(e["to"], e["outcome"]) for e in history(run_cli)] == [(18, "made")]
