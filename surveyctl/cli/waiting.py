"""Waiting in the foreground until the person stops the command (Ctrl-C, or SIGTERM)."""

from __future__ import annotations

import signal
import threading


def wait_for_interrupt() -> None:
    """Returns once SIGINT or SIGTERM arrives; the previous handlers are put back."""
    stopped = threading.Event()

    def stop(signum, frame) -> None:
        stopped.set()

    previous = {number: signal.signal(number, stop) for number in (signal.SIGINT, signal.SIGTERM)}
    try:
        while not stopped.wait(0.5):  # short waits: the handler runs between them
            pass
    finally:
        for number, handler in previous.items():
            signal.signal(number, handler)
