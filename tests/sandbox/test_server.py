"""The sandbox's HTTP server: kept-alive connections, escaped path segments, stop, --threads."""

from __future__ import annotations

import http.client
import socket
import threading
import time
from urllib.parse import urlsplit

import pytest
import requests

from surveyctl.sandbox.server import SandboxOptions, SandboxStartError, start

MALE = [{"qualification_code": 211, "condition_codes": ["111"]}]
TOKEN = {"access-token": "sandbox-buyer-1"}


def test_one_connection_serves_request_after_request(sandbox):
    address = urlsplit(sandbox.url)
    connection = http.client.HTTPConnection(address.hostname, address.port, timeout=10)
    sockets = set()
    for _ in range(3):
        connection.request("GET", "/buyers/v2/surveys", headers=TOKEN)
        response = connection.getresponse()
        response.read()
        sockets.add(id(connection.sock))
        assert response.status == 200
        assert response.getheader("Connection", "").lower() != "close"
    connection.close()
    assert len(sockets) == 1


def test_a_quota_id_with_an_escaped_percent_sign_stays_literal(api, make_body):
    body = make_body()
    body["quotas"][0]["buyer_quota_id"] = "m%2F18"  # sent as m%252F18 in the path
    survey_id = api.create_survey(body)["ps_survey_id"]
    answer = api.update_quota(survey_id, "m%2F18", {"required_count": 9, "criteria": MALE})
    assert answer["buyer_quota_id"] == "m%2F18"


def test_a_stopped_sandbox_refuses_connections_and_leaves_no_thread(tmp_path):
    before = set(threading.enumerate())
    running = start(SandboxOptions(db_path=tmp_path / "s.db"))
    assert requests.get(running.url + "/buyers/v2/surveys", headers=TOKEN).status_code == 200
    running.stop()
    with pytest.raises(requests.ConnectionError):
        requests.get(running.url + "/buyers/v2/surveys", headers=TOKEN, timeout=5)
    assert set(threading.enumerate()) <= before


def test_a_port_in_use_is_one_clear_error(sandbox, tmp_path):
    port = urlsplit(sandbox.url).port
    with pytest.raises(SandboxStartError, match=f"cannot listen on 127.0.0.1:{port}: .*in use"):
        start(SandboxOptions(db_path=tmp_path / "s.db", port=port))


def test_delayed_requests_are_served_side_by_side_up_to_the_threads(start_sandbox):
    sandbox = start_sandbox(latency_ms=300, threads=4)
    answers: list[int] = []

    def get() -> None:
        response = requests.get(sandbox.url + "/buyers/v2/surveys", headers=TOKEN, timeout=10)
        answers.append(response.status_code)

    clients = [threading.Thread(target=get) for _ in range(4)]
    for client in clients:
        client.start()
    for client in clients:
        client.join(timeout=0.9)  # one after another would take 1.2 s
    assert answers == [200] * 4


def test_idle_connections_do_not_hold_the_request_threads(start_sandbox):
    sandbox = start_sandbox(threads=4)
    address = urlsplit(sandbox.url)
    idle = [socket.create_connection((address.hostname, address.port)) for _ in range(40)]
    try:
        started = time.monotonic()
        response = requests.get(sandbox.url + "/buyers/v2/surveys", headers=TOKEN, timeout=10)
        took = time.monotonic() - started
    finally:
        for connection in idle:
            connection.close()
    assert response.status_code == 200
    assert took < 2.0  # before: every thread waited on an idle socket until its timeout


def test_a_connection_idle_before_its_first_request_is_still_served(start_sandbox):
    sandbox = start_sandbox(threads=2)
    address = urlsplit(sandbox.url)
    connection = http.client.HTTPConnection(address.hostname, address.port, timeout=10)
    connection.connect()
    time.sleep(0.3)  # waits in the selector, not on a thread
    connection.request("GET", "/buyers/v2/surveys", headers=TOKEN)
    assert connection.getresponse().status == 200
    connection.close()
