"""Waiting in the foreground until the person stops the command (Ctrl-C, SIGTERM or SIGHUP)."""

from __future__ import annotations

import signal
import threading

from surveyctl.signals import STOP_SIGNALS


def wait_for_interrupt() -> None:
    """Returns once SIGINT, SIGTERM or SIGHUP arrives; the previous handlers are put back."""
    stopped = threading.Event()

    def stop(signum, frame) -> None:
        stopped.set()

    previous = {number: signal.signal(number, stop) for number in STOP_SIGNALS}
    try:
        while not stopped.wait(0.5):  # short waits: the handler runs between them
            pass
    finally:
        for number, handler in previous.items():
            signal.signal(number, handler)
