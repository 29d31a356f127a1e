"""surveyctl.pgwatch stops only a PostgreSQL server: a postmaster.pid left by a server killed
outright may name a PID that another process has since been given."""

from __future__ import annotations

import subprocess

from surveyctl import pgwatch


def test_a_left_postmaster_pid_naming_another_process_stops_nothing(tmp_path):
    other = subprocess.Popen(["sleep", "60"])
    try:
        (tmp_path / "postmaster.pid").write_text(f"{other.pid}\n{tmp_path}\n", encoding="utf-8")
        pgwatch.stop(tmp_path, immediate=True)
        assert other.poll() is None
    finally:
        other.kill()
        other.wait()
