"""Two sandboxes (two CLI runs) on one data file see and keep each other's writes."""

from __future__ import annotations

from concurrent.futures import ThreadPoolExecutor

import requests

from surveyctl.sandbox.server import SandboxOptions, start

HEADERS = {"access-token": "sandbox-buyer-1"}


def test_two_sandboxes_on_one_file_share_their_surveys(tmp_path, make_body):
    first = start(SandboxOptions(db_path=tmp_path / "shared.db"))
    second = start(SandboxOptions(db_path=tmp_path / "shared.db"))
    try:

        def create(url: str) -> int:
            response = requests.post(
                url + "/buyers/v2/surveys", json=make_body(), headers=HEADERS, timeout=30
            )
            assert response.status_code == 201, response.text
            return response.json()["ps_survey_id"]

        with ThreadPoolExecutor(8) as pool:
            ids = list(pool.map(create, [first.url, second.url] * 10))
        listed = requests.get(
            second.url + "/buyers/v2/surveys?status=11", headers=HEADERS, timeout=30
        )
        assert len(set(ids)) == 20
        assert set(ids) <= {s["ps_survey_id"] for s in listed.json()}
    finally:
        first.stop()
        second.stop()
