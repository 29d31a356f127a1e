"""A client that notes how many of its reads of one kind were in flight at once.

The first read waits (up to 5 s) for a second to start, as reads sent side by side do at once;
reads sent one after the other never meet, so the count says which it was whatever the
machine's speed."""

from __future__ import annotations

import threading
from typing import Any


class OverlappingReads:
    """`client` (a real one, over HTTP), with `most`: the most calls of its method `read`
    (`get_survey` unless named) in flight at once."""

    def __init__(self, client: Any, read: str = "get_survey"):
        self.client = client
        self.read = read
        self._lock = threading.Lock()
        self._meeting = threading.Barrier(2)
        self._in_flight = 0
        self.most = 0

    def __getattr__(self, name: str) -> Any:
        found = getattr(self.client, name)
        if name != self.read:
            return found

        def counted(*args: Any, **kwargs: Any) -> Any:
            with self._lock:
                self._in_flight += 1
                self.most = max(self.most, self._in_flight)
            try:
                if not self._meeting.broken:
                    try:
                        self._meeting.wait(timeout=5)
                    except threading.BrokenBarrierError:
                        pass
                    self._meeting.abort()  # once is enough: no later read waits
                return found(*args, **kwargs)
            finally:
                with self._lock:
                    self._in_flight -= 1

        return counted
