"""The adjustments journal as a file and as records: what each event keeps (when, which
process), a line cut short by a kill, the account's name, which earlier journals are read, how
a record is found by a prefix of its reference, and which records keep transactions from being
sent again."""

from __future__ import annotations

import hashlib
import hmac
import json
import locale
import os
import socket
from datetime import UTC, datetime

import pytest
import yaml

from surveyctl.ops.adjust_journal import AdjustmentJournal, JournalError, account_id
from surveyctl.processes import boot_id, process_start_time

from ..conftest import BUYER_1_KEY, BUYER_2_KEY
from .conftest import JOURNAL, JOURNAL_FOLDER, adjustment_count


def _journal(project) -> AdjustmentJournal:
    return AdjustmentJournal(project.joinpath(*JOURNAL))


def _lines(project) -> list[str]:
    return project.joinpath(*JOURNAL).read_bytes().decode("utf-8", "replace").split("\n")


def _write(project, name: str, ids: list[str]) -> str:
    (project / name).write_text("".join(f"{t}\n" for t in ids), encoding="utf-8")
    return name


def test_the_journal_of_an_account_keeps_its_name_across_versions():
    # Journals written by earlier versions are found by this name: it must not change.
    salt = b"surveyctl adjustments journal: buyer account v1"
    digest = hmac.new(salt, BUYER_1_KEY.encode(), hashlib.sha256).hexdigest()
    assert account_id(BUYER_1_KEY) == f"buyer-{digest[:16]}"
    assert account_id(BUYER_1_KEY) != account_id(BUYER_2_KEY)


def test_a_key_with_bytes_the_environment_could_not_decode_names_an_account():
    # os.environ keeps undecodable bytes as lone surrogates
    key = "sandbox-\udcff-key"
    salt = b"surveyctl adjustments journal: buyer account v1"
    raw = key.encode("utf-8", "surrogateescape")
    assert account_id(key) == f"buyer-{hmac.new(salt, raw, hashlib.sha256).hexdigest()[:16]}"


def test_each_event_says_when_in_utc_and_the_sending_one_by_which_process(
    completes, run_cli, project
):
    run_cli("adjust", "ids.csv", "--yes")
    sent, answered = (json.loads(line) for line in _lines(project) if line)
    for event in (sent, answered):
        assert event["at"].endswith("+00:00")
        assert abs((datetime.fromisoformat(event["at"]) - datetime.now(UTC)).total_seconds()) < 60
    assert set(sent["process"]) == {"host", "pid", "started", "boot_id"}
    assert sent["process"]["host"] == socket.gethostname()
    assert sent["process"]["pid"] == os.getpid()  # run_cli runs the command in this process


def test_the_record_sending_returns_is_the_one_the_journal_reads_back(project):
    journal = _journal(project)
    record = journal.sending(project / "ids.csv", [("t1", 10001), ("t2", None)], 10001, ["old"])
    assert journal.records() == [record]
    assert record.process == {
        "host": socket.gethostname(),
        "pid": os.getpid(),
        "started": process_start_time(os.getpid()),
        "boot_id": boot_id(),
    }
    assert (record.file, record.survey_path, record.supersedes) == (
        str(project / "ids.csv"),
        10001,
        ["old"],
    )


def test_a_record_is_in_flight_only_while_the_very_process_that_wrote_it_runs(project):
    journal = _journal(project)
    journal.sending(project / "a.csv", [("t1", None)], None)
    mine = json.loads(journal.path.read_text())
    others = {
        "elsewhere": {"host": "another-machine"},
        "not-a-pid": {"pid": str(os.getpid())},
        "beyond-any-pid": {"pid": 99999999999},
        "pid-reused": {"started": mine["process"]["started"] + 1},  # this PID, another process
        "before-a-restart": {"boot_id": "another-boot"},
    }
    with journal.path.open("a") as out:
        for ref, process in others.items():
            out.write(json.dumps({**mine, "ref": ref, "process": {**mine["process"], **process}}))
            out.write("\n")
    flight = {record.ref: record.in_flight for record in journal.records()}
    assert flight == {mine["ref"]: True, **dict.fromkeys(others, False)}


def test_a_line_cut_short_by_a_kill_stays_apart_and_later_records_still_count(
    sandbox, completes, run_cli, project
):
    survey_id, ids = completes
    first, second = _write(project, "first.csv", ids[:1]), _write(project, "second.csv", ids[1:])
    assert run_cli("adjust", first, "--yes").exit_code == 0
    with project.joinpath(*JOURNAL).open("ab") as out:
        out.write('{"event":"answered","ref":"caf\u00e9'.encode()[:-1])  # cut inside the é
    assert run_cli("adjust", second, "--yes").exit_code == 0
    before = adjustment_count(sandbox)

    again = [run_cli("adjust", name, "--yes") for name in (first, second)]

    lines = _lines(project)
    assert len(lines) == 6 and lines[-1] == ""  # 2 events, the cut line, 2 events, all ended
    assert lines[2].startswith('{"event":"answered","ref":"caf')
    assert [json.loads(line)["event"] for line in lines[3:5]] == ["sending", "answered"]
    assert [result.exit_code for result in again] == [1, 1]
    assert adjustment_count(sandbox) == before


def test_the_journal_gets_no_blank_lines_between_its_events(completes, run_cli, project):
    survey_id, ids = completes
    for n, transaction in enumerate(ids):
        run_cli("adjust", _write(project, f"{n}.csv", [transaction]), "--yes")
    assert "" not in _lines(project)[:-1]
    assert len(_lines(project)) == 7


def test_only_the_journal_and_its_guard_are_kept_in_the_folder(completes, run_cli, project):
    run_cli("adjust", "ids.csv", "--yes")
    names = sorted(p.name for p in project.joinpath(*JOURNAL_FOLDER).iterdir())
    assert names == [f"{account_id(BUYER_1_KEY)}.guard", f"{account_id(BUYER_1_KEY)}.jsonl"]
    assert sorted(p.name for p in project.iterdir() if not p.name.startswith(".")) == [
        "ids.csv",
        "surveyctl.yaml",
    ]


def test_a_folder_the_journal_cannot_be_kept_in_is_refused_before_sending(
    sandbox, completes, run_cli, project
):
    folder = project.joinpath(*JOURNAL_FOLDER)
    folder.parent.mkdir()
    folder.symlink_to(project / "nowhere" / "adjustments")  # a link to nothing
    before = adjustment_count(sandbox)

    result = run_cli("adjust", "ids.csv", "--yes")

    assert result.exit_code == 1
    assert result.stderr.splitlines()[-1] == (
        f"Error: cannot keep the adjustments journal in {folder}: File exists; nothing sent"
    )
    assert adjustment_count(sandbox) == before


def test_a_journal_that_cannot_be_read_is_refused_naming_it(sandbox, completes, run_cli, project):
    project.joinpath(*JOURNAL).mkdir(parents=True)  # its place taken by a folder
    before = adjustment_count(sandbox)

    result = run_cli("adjust", "ids.csv", "--yes")

    assert result.exit_code == 1
    assert result.stderr.splitlines()[-1] == (
        f"Error: cannot read the adjustments journal {project.joinpath(*JOURNAL)}: Is a directory"
    )
    assert adjustment_count(sandbox) == before


def test_submitting_what_this_process_is_submitting_is_refused_by_the_journal(project):
    journal = _journal(project)
    record = journal.sending(project / "a.csv", [("t1", None), ("t2", None)], None)
    with pytest.raises(JournalError) as refused:
        journal.sending(project / "b.csv", [("t2", None)], None, [record.ref])
    assert str(refused.value) == (
        f"adjustment {record.ref[:8]} of the same transactions is being submitted now by "
        f"process {os.getpid()}; nothing sent"
    )


def test_submitting_again_what_a_record_carried_is_refused_unless_it_is_replaced(project):
    journal = _journal(project)
    record = journal.sending(project / "a.csv", [("t1", None)], None)
    journal.settle(record, "lost", reason="test")
    with pytest.raises(JournalError) as refused:
        journal.sending(project / "b.csv", [("t1", None)], None)
    assert str(refused.value) == (
        f"adjustment {record.ref[:8]} carried some of these transactions already; nothing sent"
    )
    journal.sending(project / "b.csv", [("t1", None)], None, [record.ref])


def test_records_are_found_by_a_prefix_of_their_ref(project):
    journal = _journal(project)
    refs = [journal.sending(project / "a.csv", [(f"t{n}", None)], None).ref for n in range(2)]
    common = os.path.commonprefix(refs)
    assert [r.ref for r in journal.matching(refs[0][:8])] == [refs[0]]
    assert len(journal.matching(common)) == (2 if common else 0)  # both start with it
    assert journal.matching("") == []
    assert journal.matching("no-such-ref") == []
    assert refs[0] != refs[1]


def test_a_single_record_is_not_found_by_an_empty_reference(project):
    journal = _journal(project)
    journal.sending(project / "a.csv", [("t1", None)], None)
    assert journal.matching("") == []


def test_a_resubmitted_record_shows_as_superseded(completes, run_cli, project):
    journal = _journal(project)
    survey_id, ids = completes
    old = journal.sending(project / "ids.csv", [(t, survey_id) for t in ids], None)
    journal.settle(old, "lost", reason="test")
    journal.settle(old, "checked", check={"checked": 3, "reconciled": 0, "unknown": 0})

    assert run_cli("adjust", "ids.csv", "--yes", "--resubmit").exit_code == 0

    shown = json.loads(run_cli("adjustments", "--show", old.ref[:8]).stdout)
    assert shown == {
        "ref": old.ref,
        "at": old.at,
        "file": str(project / "ids.csv"),
        "outcome": "superseded",
        "adjustment_id": None,
        "reason": "test",
        "check": {"checked": 3, "reconciled": 0, "unknown": 0, "error": ""},  # read back again
        "survey_path": None,
        "supersedes": [],
        "transactions": [{"transaction_id": t, "survey_id": survey_id} for t in ids],
        "answer": None,
    }


def test_an_answered_record_is_shown_in_full(completes, run_cli, project):
    survey_id, ids = completes
    run_cli("adjust", "ids.csv", "--yes", "--survey", str(survey_id), "--output", "a.json")
    answer = json.loads((project / "a.json").read_text())
    (record,) = _journal(project).records()

    shown = json.loads(run_cli("adjustments", "--show", record.ref).stdout)

    assert shown == {
        "ref": record.ref,
        "at": record.at,
        "file": str(project / "ids.csv"),
        "outcome": "answered",
        "adjustment_id": answer["adjustment_id"],
        "reason": None,
        "check": None,
        "survey_path": survey_id,
        "supersedes": [],
        "transactions": [{"transaction_id": t, "survey_id": survey_id} for t in ids],
        "answer": answer,
    }


def test_a_sending_event_of_few_fields_reads_as_a_record_of_unknown_time_and_file(run_cli, project):
    # A line of another version or written by hand: only what a record cannot do without.
    path = project.joinpath(*JOURNAL)
    path.parent.mkdir(parents=True)
    path.write_text('{"event":"sending","ref":"handmade-1","transactions":[["t1",null]]}\n')

    shown = json.loads(run_cli("adjustments", "--show", "handmade").stdout)
    again = run_cli("adjust", _write(project, "t.csv", ["t1"]), "--yes")

    assert (shown["at"], shown["file"], shown["survey_path"], shown["supersedes"]) == (
        "",
        "",
        None,
        [],
    )
    assert again.stdout.splitlines()[0] == (
        "adjustment handmade of  (1 transaction(s), sent ) got no answer (the command was stopped)."
    )


def test_a_refused_adjustment_blocks_nothing(sandbox, completes, run_cli, project):
    survey_id, ids = completes
    bare = _write(project, "bare.csv", ids)
    refused = run_cli("adjust", bare, "--yes", "--survey", "999999")
    assert "answered 404" in refused.stderr
    before = adjustment_count(sandbox)

    result = run_cli("adjust", "ids.csv", "--yes")

    assert result.exit_code == 0, result.output
    assert adjustment_count(sandbox) == before + 1


def _reasons(api, survey_id, ids) -> list[str]:
    """The reconciliation reason the sandbox gives each transaction (the adjustment that
    accepted it), in the order of `ids`."""
    return [api.get_transaction(survey_id, t)["Reconciliation Reason"] for t in ids]


def test_an_adjustment_blocks_only_its_own_transactions(sandbox, api, completes, run_cli, project):
    survey_id, ids = completes
    run_cli("adjust", _write(project, "first.csv", ids[:1]), "--yes")
    first = _reasons(api, survey_id, ids[:1])

    result = run_cli("adjust", _write(project, "rest.csv", ids[1:]), "--yes")

    assert result.exit_code == 0, result.output
    rest = _reasons(api, survey_id, ids[1:])
    assert len(set(rest)) == 1 and rest[0].startswith("accepted by adjustment ")
    assert rest[0] != first[0]


def _environments(project, url: str, keys: dict[str, str]) -> None:
    """Environments named after `keys` (name -> key variable), all at `url`."""
    environments = {name: {"host": url, "api_key_env": key} for name, key in keys.items()}
    config = {"environments": environments, "default_environment": next(iter(keys))}
    (project / "surveyctl.yaml").write_text(yaml.safe_dump(config, sort_keys=False))


def _earlier_journal(project, name: str, pairs) -> None:
    """A journal kept under the environment's name by an earlier version, answered."""
    earlier = AdjustmentJournal(project.joinpath(*JOURNAL_FOLDER, f"{name}.jsonl"))
    record = earlier.sending(project / "ids.csv", pairs, None)
    earlier.settle(record, "answered", answer={"adjustment_id": "from-before", "status": 1})


def test_an_environment_without_its_key_does_not_hide_later_ones_of_the_account(
    sandbox, completes, run_cli, project, monkeypatch
):
    survey_id, ids = completes
    monkeypatch.delenv("SURVEYCTL_UNSET_KEY", raising=False)
    keys = {"local": "SURVEYCTL_LOCAL_KEY", "unset": "SURVEYCTL_UNSET_KEY"}
    _environments(project, sandbox.url, {**keys, "third": "SURVEYCTL_LOCAL_KEY"})
    _earlier_journal(project, "third", [(t, survey_id) for t in ids])

    result = run_cli("adjust", "ids.csv", "--yes")

    assert result.exit_code == 1
    assert "was answered: adjustment from-before" in result.stdout


def test_the_earlier_journal_of_another_account_blocks_nothing(
    sandbox, completes, run_cli, project, monkeypatch
):
    survey_id, ids = completes
    monkeypatch.setenv("SURVEYCTL_OTHER_KEY", BUYER_2_KEY)
    keys = {"local": "SURVEYCTL_LOCAL_KEY", "other": "SURVEYCTL_OTHER_KEY"}
    _environments(project, sandbox.url, keys)
    _earlier_journal(project, "other", [(t, survey_id) for t in ids])
    before = adjustment_count(sandbox)

    result = run_cli("adjust", "ids.csv", "--yes")

    assert result.exit_code == 0, result.output
    assert adjustment_count(sandbox) == before + 1
    assert "from-before" not in result.output


def test_a_file_name_outside_ascii_is_written_legibly_in_the_journal(project):
    # The journal is kept for people too: `grep café` must find the submission of café.csv.
    _journal(project).sending(project / "café.csv", [("t1", None)], None)
    assert f'"file":"{project / "café.csv"}"'.encode() in project.joinpath(*JOURNAL).read_bytes()


def test_a_sending_event_without_transactions_reads_as_a_record_of_none(run_cli, project):
    path = project.joinpath(*JOURNAL)
    path.parent.mkdir(parents=True)
    path.write_text('{"event":"sending","ref":"handmade-2"}\n')

    shown = run_cli("adjustments", "--show", "handmade")

    assert shown.exit_code == 0, shown.output
    assert json.loads(shown.stdout)["transactions"] == []


@pytest.fixture
def ascii_locale():
    """The locale's encoding ASCII, as under a locale that is not UTF-8."""
    previous = locale.setlocale(locale.LC_CTYPE)
    locale.setlocale(locale.LC_CTYPE, "C")
    yield
    locale.setlocale(locale.LC_CTYPE, previous)


def test_a_file_name_outside_ascii_is_read_back_whatever_the_locale(ascii_locale, run_cli, project):
    record = _journal(project).sending(project / "café.csv", [("t1", None)], None)

    shown = json.loads(run_cli("adjustments", "--show", record.ref).stdout)

    assert shown["file"] == str(project / "café.csv")


def test_the_list_says_how_each_adjustment_ended(run_cli, project):
    journal = _journal(project)

    def sent(transaction: str):
        return journal.sending(project / f"{transaction}.csv", [(transaction, None)], None)

    journal.settle(sent("t-refused"), "refused", reason="answered 404 (code 1006)")
    journal.settle(sent("t-withdrawn"), "withdrawn")
    journal.settle(sent("t-lost"), "lost", reason="connection reset")
    checked = sent("t-checked")
    journal.settle(checked, "lost", reason="connection reset")
    journal.settle(checked, "checked", check={"checked": 1, "reconciled": 1, "unknown": 0})

    listing = run_cli("adjustments", "--offline")

    assert listing.exit_code == 0, listing.stderr
    outcomes = {line.rstrip().rsplit("/", 1)[-1]: line for line in listing.stdout.splitlines()}
    assert "refused: answered 404 (code 1006)" in outcomes["t-refused.csv"]
    assert "not sent (interrupted first)" in outcomes["t-withdrawn.csv"]
    assert "answer lost; not read back yet" in outcomes["t-lost.csv"]
    assert "answer lost; likely made (1 of 1 reconciled)" in outcomes["t-checked.csv"]


def test_a_ref_prefix_that_starts_two_refs_is_refused_asking_for_more_of_it(run_cli, project):
    path = project.joinpath(*JOURNAL)
    path.parent.mkdir(parents=True)
    path.write_text(
        "".join(
            f'{{"event":"sending","ref":"handmade-{n}","transactions":[["t{n}",null]]}}\n'
            for n in (1, 2)
        )
    )
    shown = run_cli("adjustments", "--show", "handmade")
    assert shown.exit_code == 1
    assert "'handmade' starts the refs of 2 adjustments in" in shown.stderr
    assert "give more of it" in shown.stderr
