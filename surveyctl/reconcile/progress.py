"""Reports each live read of a plan as it completes, for a progress display.

The planner reads one live body per resource in state (in parallel). `reporting_reads` wraps
the marketplace so that each finished read (the method each kind names as its `read_method`)
calls `report(address, done, total)`; the planner itself stays unaware of any display.
Reports may come from the planner's worker threads.
"""

from __future__ import annotations

import threading
from collections.abc import Callable
from typing import Any

from surveyctl.reconcile import kinds
from surveyctl.reconcile.marketplace import Marketplace
from surveyctl.state import State

ReadReport = Callable[[str, int, int], None]  # (address, reads done, reads in all)


class _ReportingReads:
    """A marketplace whose read of each kind (`Kind.read_method`) reports when it finishes."""

    def __init__(self, inner: Marketplace, state: State, report: ReadReport):
        self._inner = inner
        self._report = report
        # read method -> remote id -> address
        self._reads: dict[str, dict[Any, str]] = {
            kind.read_method: {} for kind in kinds.in_order() if kind.read_method
        }
        for address, record in state.resources.items():
            kind = kinds.of_address(address)
            if kind.read_method:
                self._reads[kind.read_method][record.remote_id] = address
        self._total = len(state.resources)
        self._seen: set[str] = set()
        self._lock = threading.Lock()

    def __getattr__(self, name: str) -> Any:
        method = getattr(self._inner, name)
        if name not in self._reads:
            return method
        known = self._reads[name]

        def reported(remote_id: Any, *args: Any, **kwargs: Any) -> Any:
            try:
                return method(remote_id, *args, **kwargs)
            finally:
                # Only reads of the resources in state are the plan's progress: the identity
                # check's and apply's own reads (of resources it creates) would count past the
                # total, and a resource read twice would count twice.
                address = known.get(remote_id)
                if address is not None:
                    self._tick(address)

        return reported

    def _tick(self, address: str) -> None:
        with self._lock:
            if address in self._seen:
                return
            self._seen.add(address)
            done = len(self._seen)
        self._report(address, done, self._total)


def reporting_reads(inner: Marketplace, state: State, report: ReadReport) -> Marketplace:
    """`inner`, reporting each live read of the resources of `state` through `report`."""
    return _ReportingReads(inner, state, report)  # type: ignore[return-value]
