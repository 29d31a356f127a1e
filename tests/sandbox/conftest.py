"""Helpers of the sandbox tests: survey bodies, raw HTTP sessions and the sandbox's store."""

from __future__ import annotations

import copy
import itertools
import re
import signal
import subprocess
import sys
import uuid

import pytest
import requests

from surveyctl.sandbox.store import Store

BUYER_1 = "sandbox-buyer-1"
BUYER_2 = "sandbox-buyer-2"
HEADERS = {"access-token": BUYER_1}

BASE_SURVEY = {
    "survey_title": "Brand tracker",
    "survey_category_code": 231,
    "survey_localization": "en_US",
    "completes_required": 100,
    "expected_ir": 40,
    "expected_loi": 12,
    "live_url": "https://survey.example.com/s/bt?tid=[%%transaction_id%%]",
    "field_time": 14,
    "qualifications": [{"qualification_code": 211, "condition_codes": ["111", "112"]}],
    "quotas": [
        {
            "buyer_quota_id": "male",
            "required_count": 60,
            "criteria": [{"qualification_code": 211, "condition_codes": ["111"]}],
        },
        {
            "buyer_quota_id": "female",
            "required_count": 60,
            "criteria": [{"qualification_code": 211, "condition_codes": ["112"]}],
        },
    ],
}

_transaction_numbers = itertools.count(1)
LIVE = 22
IN_BUYER_SURVEY = 16


def survey_body(**overrides) -> dict:
    """A valid create body; keyword arguments replace fields (None removes one)."""
    body = copy.deepcopy(BASE_SURVEY)
    for key, value in overrides.items():
        if value is None:
            body.pop(key, None)
        else:
            body[key] = value
    return body


def new_ref() -> str:
    return f"group-{uuid.uuid4().hex[:12]}"


def new_transaction_id() -> str:
    return f"tx-{uuid.uuid4().hex[:8]}-{next(_transaction_numbers)}"


class Raw:
    """A requests session on the sandbox's host with a buyer's token (None: no token)."""

    def __init__(self, url: str, token: str | None = BUYER_1):
        self.url = url
        self.session = requests.Session()
        if token is not None:
            self.session.headers["access-token"] = token

    def __call__(self, method: str, path: str, **kwargs) -> requests.Response:
        return self.session.request(method, self.url + path, timeout=10, **kwargs)

    def v2(self, method: str, path: str, **kwargs) -> requests.Response:
        return self(method, "/buyers/v2" + path, **kwargs)

    def v3(self, method: str, path: str, **kwargs) -> requests.Response:
        return self(method, "/buyers/v3" + path, **kwargs)

    def create(self, **overrides) -> dict:
        response = self.v2("POST", "/surveys", json=survey_body(**overrides))
        assert response.status_code == 201, response.text
        return response.json()


@pytest.fixture
def raw(sandbox) -> Raw:
    """Raw HTTP as buyer 1, for what a well-behaved client would never send."""
    return Raw(sandbox.url)


@pytest.fixture
def strict_raw(strict_sandbox) -> Raw:
    """Raw HTTP as buyer 1 on the sandbox served with --strict."""
    return Raw(strict_sandbox.url)


@pytest.fixture
def raw2(sandbox) -> Raw:
    return Raw(sandbox.url, BUYER_2)


@pytest.fixture
def store(sandbox) -> Store:
    """The store behind the session's sandbox (what the traffic simulator writes through)."""
    return sandbox.store


@pytest.fixture
def make_body():
    """`make_body(**overrides)`: a valid create body (see `survey_body`)."""
    return survey_body


@pytest.fixture
def fresh_ref():
    """`fresh_ref()`: an exclusion group ref no other test uses."""
    return new_ref


@pytest.fixture
def fresh_transaction_id():
    """`fresh_transaction_id()`: a transaction id no other test uses."""
    return new_transaction_id


@pytest.fixture
def live_survey(raw):
    """`live_survey(**overrides)`: a survey of buyer 1 set live; its id."""

    def make(**overrides) -> int:
        survey_id = raw.create(**overrides)["ps_survey_id"]
        response = raw.v2("PUT", f"/surveys/{survey_id}/status", json={"ps_survey_status": LIVE})
        assert response.status_code == 200, response.text
        return survey_id

    return make


@pytest.fixture
def held_sessions(raw):
    """`held_sessions(survey_id, respondents, seed)`: simulated respondents stopped in the
    buyer's survey (status 16); their transaction ids."""

    def make(survey_id: int, respondents: int = 20, seed: int = 4) -> list[str]:
        body = {"respondents": respondents, "seed": seed, "hold": True}
        response = raw("POST", f"/sandbox/surveys/{survey_id}/simulate", json=body)
        assert response.status_code == 200, response.text
        listed = raw.v3(
            "GET", f"/surveys/{survey_id}/transactions?status={IN_BUYER_SURVEY}&limit=1000"
        )
        return [row["Transaction ID"] for row in listed.json()]

    return make


class Served:
    """A `surveyctl sandbox serve` process on a free port."""

    def __init__(self, db, *extra: str):
        self.process = subprocess.Popen(
            [sys.executable, "-m", "surveyctl", "sandbox", "serve", "--port", "0", "--db", str(db)]
            + list(extra),
            stdout=subprocess.PIPE,
            stderr=subprocess.PIPE,
            text=True,
        )
        self.banner = []
        while True:
            line = self.process.stdout.readline()
            if not line:
                raise AssertionError(self.process.stderr.read())
            self.banner.append(line)
            if line.startswith("Press Ctrl-C"):
                break
        self.url = re.search(r"http://(\[[0-9a-f:]+\]|[^:/\s]+):\d+", self.banner[0]).group(0)

    def stop(self, number: int = signal.SIGINT) -> int:
        self.process.send_signal(number)
        return self.process.wait(timeout=10)


@pytest.fixture
def served(tmp_path):
    processes = []

    def serve(*extra: str) -> Served:
        process = Served(tmp_path / "sandbox.db", *extra)
        processes.append(process)
        return process

    yield serve
    for process in processes:
        if process.process.poll() is None:
            process.process.kill()
            process.process.wait()
