"""Colour and bars in logs: a terminal that says it shows none (TERM=dumb: an editor's shell,
some CI runners that attach a pseudo-terminal) gets plain text, as a pipe does; and under CI no
bar is redrawn in place (a runner's log keeps every frame), one line per step instead."""

from __future__ import annotations

import os
import sys

import pytest

from surveyctl.cli.console import redraws, use_color
from surveyctl.cli.progress import Steps


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


def test_a_terminal_outside_ci_gets_a_bar_redrawn_in_place(terminal, monkeypatch):
    monkeypatch.setenv("TERM", "xterm-256color")
    monkeypatch.delenv("CI", raising=False)
    assert redraws(terminal) is True


@pytest.mark.parametrize(("variable", "value"), [("CI", "true"), ("TERM", "dumb")])
def test_a_terminal_in_ci_or_a_dumb_one_gets_no_bar(terminal, monkeypatch, variable, value):
    monkeypatch.setenv("TERM", "xterm-256color")
    monkeypatch.delenv("CI", raising=False)
    monkeypatch.setenv(variable, value)
    assert redraws(terminal) is False


def test_progress_in_ci_on_a_terminal_is_one_plain_line_per_step(monkeypatch):
    # A runner that attaches a pseudo-terminal keeps every frame of a bar in the job's log.
    leader, follower = os.openpty()
    stream = open(follower, "w", encoding="utf-8")
    monkeypatch.setattr(sys, "stderr", stream)
    monkeypatch.setenv("TERM", "xterm-256color")
    monkeypatch.setenv("CI", "true")
    try:
        steps = Steps("read")
        steps.step("Survey/a", 1, 2)
        steps.close()
        stream.flush()
        written = os.read(leader, 4096).decode()
    finally:
        stream.close()
        os.close(leader)
    assert written.replace("\r\n", "\n") == "read Survey/a (1/2)\n"


def test_a_progress_line_shows_a_right_to_left_override_and_an_escape_as_escapes(capsys):
    steps = Steps("apply")
    steps.step("Survey/a", 1, 1, detail="updated quotas x\u202e\x1b[31mRED of 10007")
    steps.close()
    assert capsys.readouterr().err == (
        "apply Survey/a (1/1): updated quotas x\\u202e\\u001b[31mRED of 10007\n"
    )
