"""Which environments count as a sandbox for sandbox-only commands (`sandbox simulate`): the
embedded one and hosts on loopback, where `surveyctl sandbox serve` listens; never a private
network address, which may well be a real marketplace behind a proxy."""

from __future__ import annotations

import pytest

from surveyctl.config import Environment
from surveyctl.errors import SurveyctlError
from surveyctl.safety import is_sandbox, require_sandbox


@pytest.mark.parametrize(
    "host",
    [
        "http://localhost:8080",
        "http://127.0.0.1:8080",
        "http://127.0.0.2",
        "http://127.255.255.254:9000",
        "http://[::1]:8080",
    ],
)
def test_a_host_on_loopback_is_a_sandbox(host):
    assert is_sandbox(Environment("local", host=host, api_key_env="K"))


def test_the_embedded_sandbox_is_a_sandbox():
    assert is_sandbox(Environment("embedded"))


@pytest.mark.parametrize(
    "host",
    [
        "http://10.0.0.5:8080",
        "http://192.168.1.20",
        "http://172.16.0.1",
        "http://[fd00::1]",
        "https://api.example.com",
        "http://localhost.example.com",
        "http://127.0.0.1.example.com",
    ],
)
def test_private_and_public_hosts_are_not_a_sandbox(host):
    environment = Environment("staging", host=host, api_key_env="K")
    assert not is_sandbox(environment)
    with pytest.raises(SurveyctlError) as refused:
        require_sandbox(environment, "sandbox simulate")
    assert str(refused.value) == (
        "environment 'staging' is not a sandbox: sandbox simulate works only against the "
        "sandbox marketplace (the embedded one, or `surveyctl sandbox serve` on loopback)"
    )


def test_require_sandbox_lets_a_loopback_environment_through():
    require_sandbox(Environment("local", host="http://127.0.0.1:1", api_key_env="K"), "simulate")
