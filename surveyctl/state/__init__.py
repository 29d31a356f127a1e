"""State: what surveyctl knows about the resources it manages in one environment.

Two backends keep it, chosen per environment (`state:` in surveyctl.yaml, see `open_state`):
the file (the default, below; `surveyctl.state.file`) and PostgreSQL
(`surveyctl.state.postgres`: one row per resource, serial-checked transactions, an advisory
lock, a history table). Each registers itself in `surveyctl.state.registry`, which reads its
settings and opens it.

`.surveyctl/state/<environment>.json` holds, per resource address (`Survey/<name>`,
`ExclusionGroup/<name>`), the service's ids and the body last applied - the third side of the
three-way merge - plus a journal of creates in flight:

```json
{"format_version": 1, "lineage": "0c6e...", "serial": 7,
 "resources": {
   "Survey/brand-tracker-us": {"ps_survey_id": 4711, "quota_ids": {"male": "9f1c..."},
                               "last_applied": {"survey_title": "Brand tracker US", "...": "..."}},
   "ExclusionGroup/brand-trackers": {"buyer_surveygroup_ref": "brand-trackers-2026",
                                     "ps_survey_ids": [4711], "last_applied": {"...": "..."}}},
 "journal": {"Survey/brand-tracker-ca": {"address": "Survey/brand-tracker-ca",
             "started_at": "2026-11-21T13:30:00+00:00", "fingerprint": "sha256:..."}}}
```

A create (POST) is journaled before it is sent and resolved right after the answer. A POST is
never retried blindly, so an entry still there after a crash means "a survey may exist that the
state does not know": it blocks a second create of that name. The next plan resolves it from
what the marketplace shows (`surveyctl.reconcile.recovery`); only when that cannot tell does it
wait for `surveyctl import` or `surveyctl state rm`.

A state holding what this surveyctl does not know (a later `format_version`, a field of the
top, of a record or of a create in flight, a resource of another kind) was written by a later
surveyctl, and is refused whole rather than written back without it (`records.newer_state`).

The lineage is made once, when the state is first written, and never changes; the serial grows
by one on every write. Together they let a saved plan notice that the state moved under it.

A write does not rewrite the file: it appends one line, the change it makes (serial, who,
when, command, and each address before and after), to `<environment>.changes.jsonl` and
fsyncs it. The command that holds the lock folds that log into the JSON file when it ends
(temporary file in the same folder, fsynced, renamed over the old one) and moves the lines to
`<environment>.history.jsonl`. Whoever reads the state reads the JSON file and replays the
log, so a command killed at any point loses nothing it wrote, and between commands the file a
user reads is the whole state. The API key is never part of the state: nothing here receives
it.
"""

from __future__ import annotations

from typing import TYPE_CHECKING

# Each backend package registers itself when imported (one line per backend).
import surveyctl.state.file
import surveyctl.state.postgres  # noqa: F401  (psycopg is imported only when one is opened)
from surveyctl.state.backend import StateBackend
from surveyctl.state.changes import HistoryEntry, actor
from surveyctl.state.file import FileStateStore
from surveyctl.state.lock import LockError, LockHeld, LockInfo, LockLost
from surveyctl.state.records import (
    FORMAT_VERSION,
    RECORD_TYPES,
    GroupRecord,
    JournalEntry,
    Record,
    State,
    StateError,
    SurveyRecord,
    fingerprint,
    register_record,
    state_file,
    unregister_record,
)
from surveyctl.state.registry import BackendSettings, get

if TYPE_CHECKING:  # the configuration imports this package to read `state:` settings
    from surveyctl.config import Config, Environment


def open_state(
    config: Config, environment: Environment, settings: BackendSettings | None = None
) -> StateBackend:
    """The state backend of `environment` as its `state:` setting names it (or `settings`, to
    reach another one), opened by the backend registered under that name."""
    settings = settings or environment.state
    store = get(settings.backend).open(settings, config, environment.name)
    store.actor = actor(config.actor_name())
    return store


__all__ = [
    "BackendSettings",
    "FORMAT_VERSION",
    "GroupRecord",
    "HistoryEntry",
    "JournalEntry",
    "RECORD_TYPES",
    "Record",
    "State",
    "StateError",
    "FileStateStore",
    "LockError",
    "LockHeld",
    "LockInfo",
    "LockLost",
    "StateBackend",
    "SurveyRecord",
    "fingerprint",
    "open_state",
    "register_record",
    "state_file",
    "unregister_record",
]
