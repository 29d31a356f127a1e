"""The sandbox's data file met by another surveyctl: an earlier one's is brought up to date and
served; a later one's is refused, untouched, since this sandbox would serve its tables without
what a later layout keeps in them."""

from __future__ import annotations

import shutil
import sqlite3
from pathlib import Path

from click.testing import CliRunner

from surveyctl.api import ApiClient
from surveyctl.cli.main import cli
from surveyctl.sandbox.store import Store
from surveyctl.sandbox.store.database import LAYOUT

from .conftest import BUYER_1

# The data of a sandbox before it kept each survey's mod_on or its layout: two surveys of
# buyer 1, `Tracker US` (10001) and `Tracker CA` (10002), drafts.
EARLIER = Path(__file__).parent / "data" / "earlier-8527fea.db"


def _layout(path: Path) -> int:
    with sqlite3.connect(path) as connection:
        return connection.execute("PRAGMA user_version").fetchone()[0]


def test_the_data_of_an_earlier_sandbox_is_served_and_kept_up_to_date(tmp_path, start_sandbox):
    path = tmp_path / "own-0.db"
    shutil.copyfile(EARLIER, path)
    sandbox = start_sandbox()
    client = ApiClient(sandbox.url, BUYER_1, retries=0)

    survey = client.get_survey(10001)
    client.update_survey(10002, {**client.get_survey(10002), "survey_title": "Tracker CA 2"})
    updated = client.get_survey(10002)
    client.close()

    assert survey["survey_title"] == "Tracker US"
    assert updated["survey_title"] == "Tracker CA 2"
    assert isinstance(updated["mod_on"], int)
    assert _layout(path) == LAYOUT


def test_the_data_of_a_later_sandbox_is_refused_and_left_as_it_was(tmp_path):
    path = tmp_path / "later.db"
    Store(path).close()
    with sqlite3.connect(path) as connection:
        connection.execute(f"PRAGMA user_version = {LAYOUT + 1}")
    before = path.read_bytes()

    result = CliRunner().invoke(cli, ["sandbox", "serve", "--port", "0", "--db", str(path)])

    assert result.exit_code == 1
    assert result.output.startswith(
        f"Error: {path}: the sandbox data was made by a newer surveyctl (layout {LAYOUT + 1}"
    )
    assert "move the file aside" in result.output
    assert path.read_bytes() == before
