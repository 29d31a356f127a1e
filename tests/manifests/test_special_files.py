"""Only regular files are read as manifests: a FIFO in the folder would make `validate` wait
for a writer forever; one named explicitly is refused in one sentence."""

from __future__ import annotations

import os
import socket
import subprocess

import pytest

from .conftest import make_survey, run_surveyctl

# A hang is what the old code did; the commands take well under a second.
GUARD_SECONDS = 30


def _surveyctl(project, *args: str) -> subprocess.CompletedProcess:
    return run_surveyctl(project, *args, timeout=GUARD_SECONDS)


@pytest.fixture
def folder(tmp_path):
    """A manifest folder with one valid survey and a FIFO named like a manifest."""
    manifests = tmp_path / "manifests"
    manifests.mkdir()
    (manifests / "survey.yaml").write_text(make_survey(), encoding="utf-8")
    os.mkfifo(manifests / "pipe.yaml")
    return manifests


def test_a_fifo_in_the_manifest_folder_is_skipped_with_a_warning(tmp_path, folder):
    result = _surveyctl(tmp_path, "validate", "--offline", "manifests")
    assert result.returncode == 0, result.stdout + result.stderr
    assert "Skipped manifests/pipe.yaml: it is a FIFO (named pipe)" in result.stdout
    assert "1 survey and 0 exclusion groups in 1 file" in result.stdout


def test_a_fifo_named_explicitly_is_refused_in_one_sentence(tmp_path, folder):
    result = _surveyctl(tmp_path, "validate", "--offline", "manifests/pipe.yaml")
    assert result.returncode == 1
    assert "manifests/pipe.yaml is a FIFO (named pipe), not a regular file" in result.stdout
    assert "Traceback" not in result.stderr


def test_fmt_check_refuses_a_fifo_named_explicitly(tmp_path, folder):
    result = _surveyctl(tmp_path, "fmt", "--check", "manifests/pipe.yaml")
    assert result.returncode == 1
    assert "is a FIFO (named pipe), not a regular file" in result.stderr


def test_a_device_named_explicitly_is_refused(tmp_path):
    result = _surveyctl(tmp_path, "validate", "--offline", "/dev/null")
    assert result.returncode == 1
    assert "/dev/null is a character device, not a regular file" in result.stdout


def test_a_socket_named_explicitly_is_refused(tmp_path, monkeypatch):
    # A socket's path must be short (about 100 bytes); a pytest tmp path may be longer.
    monkeypatch.chdir(tmp_path)
    with socket.socket(socket.AF_UNIX) as listener:
        listener.bind("sock.yaml")
        result = _surveyctl(tmp_path, "validate", "--offline", "sock.yaml")
    assert result.returncode == 1
    assert "sock.yaml is a socket, not a regular file" in result.stdout


def test_a_link_back_to_a_parent_folder_reads_each_manifest_once(tmp_path, folder):
    (folder / "pipe.yaml").unlink()
    (folder / "loop").symlink_to("..")
    result = _surveyctl(tmp_path, "validate", "--offline", "manifests")
    assert result.returncode == 0, result.stdout + result.stderr
    assert "defined twice" not in result.stdout
    assert "1 survey and 0 exclusion groups in 1 file" in result.stdout


def test_links_to_one_folder_read_it_once_and_say_so(tmp_path, folder):
    # Two links at each level would double the walk at every level (2**40 paths by the depth
    # the system stops links at); each folder is read once.
    (folder / "pipe.yaml").unlink()
    (folder / "a").symlink_to(".")
    (folder / "b").symlink_to(".")
    result = _surveyctl(tmp_path, "validate", "--offline", "manifests")
    assert result.returncode == 0, result.stdout + result.stderr
    assert "Skipped manifests/b: a link to the folder" in result.stdout
    assert "in 1 file" in result.stdout
