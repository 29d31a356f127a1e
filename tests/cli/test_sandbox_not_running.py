"""An environment on loopback whose sandbox is not running: the error says what to start."""

from __future__ import annotations

import socket

from click.testing import CliRunner

from surveyctl.cli.main import cli


def _closed_port() -> int:
    """A loopback port nothing listens on (taken from the system, then let go)."""
    with socket.socket() as probe:
        probe.bind(("127.0.0.1", 0))
        return probe.getsockname()[1]


def test_a_loopback_host_that_refuses_the_connection_is_told_to_start_the_sandbox(
    tmp_path, monkeypatch
):
    port = _closed_port()
    (tmp_path / "surveyctl.yaml").write_text(
        "environments:\n"
        f"  local: {{host: 'http://127.0.0.1:{port}', api_key_env: SURVEYCTL_LOCAL_KEY}}\n"
        "default_environment: local\n",
        encoding="utf-8",
    )
    monkeypatch.setenv("SURVEYCTL_LOCAL_KEY", "sandbox-buyer-1")
    monkeypatch.chdir(tmp_path)
    result = CliRunner().invoke(cli, ["--timeout", "1", "status", "10001"])
    assert result.exit_code == 1
    last = result.stderr.splitlines()[-1]
    assert f"cannot reach environment 'local' at http://127.0.0.1:{port}: connection refused" in (
        last
    )
    assert last.endswith(
        f"; nothing listens at 127.0.0.1:{port}: start the sandbox there with "
        f"`surveyctl sandbox serve --port {port}` (in another terminal), or correct the host "
        "of environment 'local'"
    )
