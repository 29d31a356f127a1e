"""Colour in logs: a terminal that says it shows none (TERM=dumb: an editor's shell, some CI
runners that attach a pseudo-terminal) gets plain text, as a pipe does."""

from __future__ import annotations

import os

import pytest

from surveyctl.cli.console import use_color


@pytest.fixture
def terminal():
    """A real pseudo-terminal to write to."""
    leader, follower = os.openpty()
    stream = open(follower, "w", encoding="utf-8")
    yield stream
    stream.close()
    os.close(leader)


def test_a_terminal_gets_colour(terminal, monkeypatch):
    monkeypatch.setenv("TERM", "xterm-256color")
    monkeypatch.delenv("NO_COLOR", raising=False)
    assert use_color(terminal) is True


def test_a_dumb_terminal_gets_no_colour(terminal, monkeypatch):
    monkeypatch.setenv("TERM", "dumb")
    monkeypatch.delenv("NO_COLOR", raising=False)
    assert use_color(terminal) is False
