"""The local record of every adjustment submitted: written before it is sent, settled after.

An adjustment moves money and the service offers no way to ask for it again, so a command
killed while the request is in flight would leave nobody knowing whether it was made. Each
submission is therefore journalled, durably, before the request leaves (`sending`: when, from
which file, which transactions, by which process), and settled when the answer comes
(`answered`, with the adjustment id and summary), when the service refuses it (`refused`), or
when the answer is lost (`lost`). A record without a final event whose process is gone is an
adjustment that may have been made. The next `adjust` of any transaction an earlier record
carried (answered, or with its answer lost) shows that record and submits the transactions
again only when told to (`--resubmit`): after a crash nobody re-sends money by re-running a
command; `surveyctl adjustments` lists every record.

The journal is one file per buyer account, `.surveyctl/adjustments/buyer-<account>.jsonl`,
one JSON event per line, appended and synced; a line cut short by a kill is ignored. It is
kept per account, not per environment name, because what must not happen twice is money
moving on an account: two environment names for one account, or an environment renamed, see
the same submissions (`account_id`). The journals written by earlier versions, one per
environment name (`.surveyctl/adjustments/<environment>.jsonl`), are still read for the
environments of the same account, so the submissions recorded there keep protecting their
transactions. Deciding that nothing else is submitting the same transactions and appending
`sending` is one step under a file lock, so two commands started together cannot both send
them.
"""

from __future__ import annotations

import hashlib
import hmac
import json
import os
import socket
import uuid
from collections.abc import Iterable
from dataclasses import dataclass, field
from datetime import UTC, datetime
from pathlib import Path
from typing import TYPE_CHECKING, Any

from filelock import FileLock

from surveyctl.errors import SurveyctlError
from surveyctl.files import append_lines, os_error_message
from surveyctl.processes import boot_id, is_process_id, process_running, process_start_time

if TYPE_CHECKING:  # only for the type: the configuration loads YAML
    from surveyctl.config import Config, Environment

# Outcomes that end a record: the answer came, the service refused it, it was withdrawn before
# it was sent, or a later submission of its transactions (`--resubmit`) took its place.
FINAL = ("answered", "refused", "withdrawn", "superseded")
# Outcomes after which the transactions were certainly not adjusted by that record.
NOT_SENT = ("refused", "withdrawn")

# The account is known by its API key, and the key must never be written down: the journal is
# named by a keyed hash of it instead (HMAC-SHA256), which gives the same name for the same key
# on every machine and does not give the key back. The salt is fixed and no secret; it only
# keeps the name apart from a plain SHA-256 of the key that might be kept somewhere else.
ACCOUNT_SALT = b"surveyctl adjustments journal: buyer account v1"
# 64 bits: the accounts of one project never share a name, and the name stays short.
ACCOUNT_DIGITS = 16


def account_id(api_key: str) -> str:
    """The name of the buyer account that `api_key` belongs to, as the journal is keyed.

    The key alone decides it, not the environment's host: the key is what the marketplace knows
    the buyer by, while one marketplace can be reached at several addresses (a port, a proxy, a
    trailing path), and a journal that changed with the address would let money move twice. A
    key used with two marketplaces makes them share a journal, which blocks nothing as long as
    their transaction ids differ (they are UUIDs).
    """
    # surrogateescape: any string the environment variable held hashes without an error
    key = api_key.encode("utf-8", "surrogateescape")
    digest = hmac.new(ACCOUNT_SALT, key, hashlib.sha256).hexdigest()
    return f"buyer-{digest[:ACCOUNT_DIGITS]}"


class JournalError(SurveyctlError):
    """The adjustments journal cannot be written; nothing is sent without it."""


@dataclass
class AdjustmentRecord:
    """One submission as the journal knows it, its events folded together."""

    ref: str  # the local reference (the service's adjustment id comes only with the answer)
    at: str
    file: str
    transactions: list[tuple[str, int | None]]  # (transaction id, survey named for it)
    survey_path: int | None  # the survey of the per-survey path, when it was used
    process: dict[str, Any]
    supersedes: list[str] = field(default_factory=list)
    outcome: str = "sending"  # sending, lost, or one of FINAL
    answer: dict | None = None
    reason: str = ""
    check: dict | None = None  # the last read-back of a record whose answer was lost
    resubmitted: bool = False  # a later record (`--resubmit`) carried its transactions again

    @property
    def settled(self) -> bool:
        return self.outcome in FINAL

    @property
    def in_flight(self) -> bool:
        """Still being submitted by a process that runs now."""
        return self.outcome == "sending" and _alive(self.process)

    @property
    def unresolved(self) -> bool:
        """Sent, or about to be, with no answer and nobody waiting for it any more."""
        return not self.settled and not self.in_flight

    @property
    def ids(self) -> list[str]:
        return [transaction for transaction, _ in self.transactions]

    def to_json(self) -> dict:
        return {
            "ref": self.ref,
            "at": self.at,
            "file": self.file,
            "outcome": self.outcome,
            "adjustment_id": (self.answer or {}).get("adjustment_id"),
            "reason": self.reason or None,
            "check": self.check,
            "survey_path": self.survey_path,
            "supersedes": self.supersedes,
            "transactions": [{"transaction_id": t, "survey_id": s} for t, s in self.transactions],
            "answer": self.answer,
        }


class AdjustmentJournal:
    """The journal of one buyer account's adjustments: `path`, where every event is written,
    and the `earlier` files it also reads (journals of earlier versions)."""

    def __init__(self, path: Path, earlier: Iterable[Path] = ()):
        self.path = Path(path)
        self.earlier = [Path(p) for p in earlier if Path(p) != self.path]

    @classmethod
    def of(cls, config: Config, environment: Environment) -> AdjustmentJournal:
        """The journal of the account `environment` reaches (ConfigError when its key is not
        set). It also reads the journals that earlier versions kept per environment name: the
        one of `environment`, and those of the other environments of `config` whose key is
        set and reaches the same account (the records of one account under two names)."""
        folder = Path(config.work_dir) / "adjustments"
        account = account_id(environment.api_key())
        names = [environment.name]
        for other in config.environments.values():
            try:
                same = account_id(other.api_key()) == account
            except SurveyctlError:  # its key is not set here: its account cannot be told
                continue
            if same and other.name not in names:
                names.append(other.name)
        return cls(
            folder / f"{account}.jsonl", earlier=[folder / f"{name}.jsonl" for name in names]
        )

    def records(self) -> list[AdjustmentRecord]:
        """Every submission, oldest first."""
        records: dict[str, AdjustmentRecord] = {}
        for event in self._events():
            ref = event.get("ref")
            if event.get("event") == "sending":
                records[ref] = AdjustmentRecord(
                    ref=ref,
                    at=event.get("at", ""),
                    file=event.get("file", ""),
                    transactions=[(t, s) for t, s in event.get("transactions", [])],
                    survey_path=event.get("survey_path"),
                    process=event.get("process", {}),
                    supersedes=list(event.get("supersedes", [])),
                )
            elif ref in records:
                _fold(records[ref], event)
        # A resubmission replaces the records it names unless it was itself never sent.
        superseded = {
            old
            for record in records.values()
            if record.outcome not in NOT_SENT
            for old in record.supersedes
        }
        for ref in superseded.intersection(records):
            records[ref].resubmitted = True
            if not records[ref].settled:
                records[ref].outcome = "superseded"
        return list(records.values())

    def matching(self, ref: str) -> list[AdjustmentRecord]:
        """The records whose reference is or starts with `ref`, or whose answer gave `ref` as
        the service's adjustment id (what `adjust` prints)."""
        if not ref:
            return []
        return [
            r
            for r in self.records()
            if r.ref.startswith(ref) or (r.answer or {}).get("adjustment_id") == ref
        ]

    def overlapping(self, ids: Iterable[str]) -> list[AdjustmentRecord]:
        """The records that carried any of `ids` to the service, or may have (answered, in
        flight, answer lost), and that no later record submitted again."""
        wanted = set(ids)
        return [
            r
            for r in self.records()
            if r.outcome not in NOT_SENT and not r.resubmitted and wanted.intersection(r.ids)
        ]

    def sending(
        self,
        file: Path,
        transactions: list[tuple[str, int | None]],
        survey_path: int | None,
        supersedes: Iterable[str] = (),
    ) -> AdjustmentRecord:
        """Records a submission about to be sent. JournalError when another command is
        submitting any of its transactions now, or an earlier record carried them and is not
        in `supersedes` (checked and written as one step)."""
        allowed = set(supersedes)
        ids = [t for t, _ in transactions]
        with self._guard():
            for record in self.overlapping(ids):
                if record.in_flight:
                    raise JournalError(
                        f"adjustment {record.ref[:8]} of the same transactions is being "
                        f"submitted now by process {record.process.get('pid')}; nothing sent"
                    )
                if record.ref not in allowed:
                    raise JournalError(
                        f"adjustment {record.ref[:8]} carried some of these transactions "
                        "already; nothing sent"
                    )
            event = {
                "event": "sending",
                "ref": str(uuid.uuid4()),
                "at": _now(),
                "file": str(Path(file).resolve()),
                "transactions": [list(pair) for pair in transactions],
                "survey_path": survey_path,
                "supersedes": sorted(allowed),
                "process": _me(),
            }
            try:
                self._append(event)
            except JournalError as exc:
                raise JournalError(f"{exc}; nothing sent") from exc
        record = AdjustmentRecord(
            event["ref"],
            event["at"],
            event["file"],
            list(transactions),
            survey_path,
            event["process"],
            supersedes=event["supersedes"],
        )
        return record

    def settle(self, record: AdjustmentRecord, outcome: str, **details: Any) -> None:
        """Appends the end of a submission: answered (answer=), refused, withdrawn or lost
        (reason=), or checked (check=)."""
        with self._guard():
            self._append({"event": outcome, "ref": record.ref, "at": _now(), **details})
        _fold(record, {"event": outcome, **details})

    # -- the file ------------------------------------------------------------------------

    def _guard(self) -> FileLock:
        try:
            self.path.parent.mkdir(parents=True, exist_ok=True)
        except OSError as exc:
            raise JournalError(
                f"cannot keep the adjustments journal in {self.path.parent}: "
                f"{exc.strerror or exc}; nothing sent"
            ) from exc
        return FileLock(str(self.path.with_suffix(".guard")))

    def _append(self, event: dict) -> None:
        line = json.dumps(event, separators=(",", ":"), ensure_ascii=False) + "\n"
        try:
            append_lines(self.path, line.encode("utf-8"))
        except OSError as exc:
            raise JournalError(
                os_error_message(exc, self.path, "write the adjustments journal")
            ) from exc

    def _events(self) -> list[dict]:
        # The earlier journals first: events written here since may settle their records.
        return [event for path in (*self.earlier, self.path) for event in _read_events(path)]


def _read_events(path: Path) -> list[dict]:
    try:
        text = path.read_text(encoding="utf-8", errors="replace")
    except FileNotFoundError:
        return []
    except OSError as exc:
        raise JournalError(
            f"cannot read the adjustments journal {path}: {exc.strerror or exc}"
        ) from exc
    events = []
    for line in text.splitlines():
        try:
            event = json.loads(line)
        except ValueError:
            continue  # a line cut short by a kill
        if isinstance(event, dict):
            events.append(event)
    return events


def _fold(record: AdjustmentRecord, event: dict) -> None:
    kind = event.get("event")
    if kind == "checked":
        record.check = event.get("check")
        return
    record.outcome = kind
    if "answer" in event:
        record.answer = event["answer"]
    if event.get("reason"):
        record.reason = event["reason"]


def _me() -> dict[str, Any]:
    pid = os.getpid()
    return {
        "host": socket.gethostname(),
        "pid": pid,
        "started": process_start_time(pid),
        "boot_id": boot_id(),
    }


def _alive(process: dict[str, Any]) -> bool:
    """Whether the process that wrote a record still runs (a reused PID is not it)."""
    if process.get("host") != socket.gethostname():
        return False  # another machine's record: it is not waiting on this journal
    pid = process.get("pid")
    if not isinstance(pid, int) or not is_process_id(pid):
        return False
    return process_running(pid, process.get("started"), process.get("boot_id"))


def _now() -> str:
    return datetime.now(UTC).isoformat(timespec="seconds")
