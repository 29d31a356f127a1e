"""Waiting in the foreground until the person stops the command (Ctrl-C, SIGTERM or SIGHUP)."""

from __future__ import annotations

import signal
import threading
from collections.abc import Callable

from surveyctl.signals import STOP_SIGNALS, ignored


class StopRequests:
    """While entered, SIGINT, SIGTERM and SIGHUP only set a flag (`wait` returns); on exit the
    previous handlers are put back. Entered before the command says "Press Ctrl-C to stop", so
    that a signal sent as soon as it is said is not raised instead. Raised inside a server's
    loop, a signal could leave that server holding a lock its own stop() then waits for."""

    def __init__(self) -> None:
        self._stopped = threading.Event()
        self._previous: dict[int, object] = {}

    def __enter__(self) -> StopRequests:
        for number in STOP_SIGNALS:
            if not ignored(number):  # `nohup`: SIGHUP stays ignored
                self._previous[number] = signal.signal(number, self._stop)
        return self

    def __exit__(self, *exc_info) -> None:
        for number, handler in self._previous.items():
            signal.signal(number, handler)

    def wait(self, going: Callable[[], bool] = lambda: True) -> None:
        """Returns once a signal came, or `going()` turned false (the work's thread ended)."""
        while going() and not self._stopped.wait(0.5):  # the handler runs between the waits
            pass

    def _stop(self, signum, frame) -> None:
        self._stopped.set()


def wait_for_interrupt() -> None:
    """Returns once SIGINT, SIGTERM or SIGHUP arrives; the previous handlers are put back."""
    with StopRequests() as requests:
        requests.wait()
