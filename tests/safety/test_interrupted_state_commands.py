"""A state-writing command other than apply interrupted with Ctrl-C (or stopped by SIGTERM) says
so in one sentence and exits 130 (143; not click's "Aborted!" and 1, nor killed where it
stood), keeps what it recorded, and releases the lock. Run as
a real process with a real signal, against a slow sandbox in a process of its own."""

from __future__ import annotations

import os
import signal
import time

import pytest

from surveyctl.api import ApiClient
from surveyctl.reconcile.importer import save_adoption, survey_adoption
from surveyctl.state import FileStateStore

from ..processes import surveyctl
from .conftest import SURVEY_SPEC, configure


@pytest.mark.parametrize(
    ("stop", "code", "said"),
    [
        (signal.SIGINT, 130, "interrupted (Ctrl-C)"),
        (signal.SIGTERM, 143, "stopped by SIGTERM"),
    ],
)
def test_a_signal_while_import_all_unmanaged_reads_exits_with_its_code_and_records_nothing(
    project, served_sandbox, stop, code, said
):
    url = served_sandbox(latency_ms=1000)
    client = ApiClient(url, "sandbox-buyer-1")
    for number in range(4):
        client.create_survey({**SURVEY_SPEC, "survey_title": f"Unmanaged {number}"})
    client.close()
    configure(project, url)
    process = surveyctl(project, "import", "--all-unmanaged", "--out-dir", "imported", "--yes")
    for line in process.stderr:
        if line.startswith("surveyctl: environment"):
            break
    time.sleep(0.5)  # inside the reads: the list, then the surveys, 1 s each
    process.send_signal(stop)
    out, err = process.communicate(timeout=60)

    assert process.returncode == code, out + err
    assert f"Error: {said}; the command stopped before it finished" in err
    assert "Aborted!" not in err and "Traceback" not in err
    store = FileStateStore(project / ".surveyctl" / "state" / "local.json")
    assert store.lock_holder() is None
    assert store.load().resources == {}


class SignalledAfterWrites(FileStateStore):
    """The file state, with a real SIGINT sent to this process as each write is on disk: a
    Ctrl-C pressed at that instant, which Python raises as the write returns."""

    def _durable(self, written) -> None:
        super()._durable(written)
        os.kill(os.getpid(), signal.SIGINT)


def test_a_ctrl_c_as_an_import_is_recorded_keeps_the_manifest_of_the_recorded_survey(project, api):
    live = api.get_survey(api.create_survey(SURVEY_SPEC)["ps_survey_id"])
    adoption = survey_adoption(live, "Survey/imported")
    manifest = project / "manifests" / "imported.yaml"
    manifest.parent.mkdir()
    store = SignalledAfterWrites(project / ".surveyctl" / "state" / "local.json", "local")

    with pytest.raises(KeyboardInterrupt), store.locked("import"):
        save_adoption(store, adoption, manifest)

    recorded = FileStateStore(project / ".surveyctl" / "state" / "local.json").load()
    assert recorded.resources["Survey/imported"].ps_survey_id == live["ps_survey_id"]
    assert manifest.exists()  # without it, `plan --destroy` would delete the survey
