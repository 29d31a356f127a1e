"""Reports each live read of a plan as it completes, for a progress display.

The planner reads one live body per resource in state (in parallel). `reporting_reads` wraps the
marketplace so that each finished read calls `report(address, done, total)`; the planner itself
stays unaware of any display. Reports may come from the planner's worker threads.
"""

from __future__ import annotations

import threading
from collections.abc import Callable
from typing import Any

from surveyctl.reconcile.marketplace import Marketplace
from surveyctl.state import State, SurveyRecord

ReadReport = Callable[[str, int, int], None]  # (address, reads done, reads in all)


class _ReportingReads:
    """A marketplace whose get_survey and get_group report when they finish."""

    def __init__(self, inner: Marketplace, state: State, report: ReadReport):
        self._inner = inner
        self._report = report
        self._surveys: dict[Any, str] = {}
        self._groups: dict[Any, str] = {}
        for address, record in state.resources.items():
            if isinstance(record, SurveyRecord):
                self._surveys[record.ps_survey_id] = address
            else:
                self._groups[record.buyer_surveygroup_ref] = address
        self._total = len(state.resources)
        self._done = 0
        self._lock = threading.Lock()

    def __getattr__(self, name: str) -> Any:
        return getattr(self._inner, name)

    def get_survey(self, survey_id: int) -> dict:
        try:
            return self._inner.get_survey(survey_id)
        finally:
            self._tick(self._surveys.get(survey_id, f"survey {survey_id}"))

    def get_group(self, ref: str) -> dict:
        try:
            return self._inner.get_group(ref)
        finally:
            self._tick(self._groups.get(ref, f"group {ref}"))

    def _tick(self, address: str) -> None:
        with self._lock:
            self._done += 1
            done = self._done
        self._report(address, done, max(self._total, done))


def reporting_reads(inner: Marketplace, state: State, report: ReadReport) -> Marketplace:
    """`inner`, reporting each live read of the resources of `state` through `report`."""
    return _ReportingReads(inner, state, report)  # type: ignore[return-value]
