"""What an apply did, as the renderers show it: per planned write its status and the remote
id it concerns, and the apply's verdict (complete, incomplete, interrupted).

Built once from the plan, the applier's result and the state after the writes, so the text
and the JSON report say the same thing.
"""

from __future__ import annotations

from dataclasses import dataclass
from typing import TYPE_CHECKING, Any

if TYPE_CHECKING:  # the applier and the state load only once an apply has run
    from surveyctl.reconcile.apply import ApplyResult, Outcome
    from surveyctl.reconcile.plan import Plan, ResourceChange
    from surveyctl.state import State


# The applier's "skipped" is what a person reads as "not attempted".
STATUS = {"done": "done", "failed": "failed", "skipped": "not attempted"}


@dataclass
class ApplyReport:
    """An apply's outcome: `result` of the writes (empty when there was nothing to do),
    `state` after them (for the ids of what was created), `refreshed` for `--refresh-only`."""

    plan: Plan
    result: ApplyResult
    state: State | None = None
    refreshed: int | None = None  # set by `apply --refresh-only`: resources recorded

    @property
    def verdict(self) -> str:
        """complete, incomplete (a write failed or was not attempted), interrupted, or
        refreshed."""
        if self.refreshed is not None:
            return "refreshed"
        if self.result.interrupted:
            return "interrupted"
        return "incomplete" if self.result.failed else "complete"

    def counts(self) -> dict[str, int]:
        """Imported, added, changed and destroyed (what was done), and done, failed, not
        attempted. Imported are the resources found on the service and recorded in the state
        before the writes (`--adopt`, or a create whose answer was lost): no write counts them,
        and an apply that adopted 19 surveys said "0 added, 0 changed" as if it did nothing."""
        done = [o.action for o in self.result.outcomes if o.status == "done"]
        return {
            "imported": sum(1 for record in self.plan.recovered.values() if record is not None),
            "added": done.count("create"),
            "changed": done.count("update") + done.count("quota-update"),
            "destroyed": done.count("delete"),
            "done": self.result.count("done"),
            "failed": self.result.count("failed"),
            "not_attempted": self.result.count("skipped"),
        }

    def rows(self) -> list[dict[str, Any]]:
        """One row per planned write, in the plan's order."""
        planned = {resource.address: resource for resource in self.plan.resources}
        order = {address: i for i, address in enumerate(planned)}
        outcomes = sorted(self.result.outcomes, key=lambda o: order.get(o.address, len(order)))
        return [self._row(outcome, planned.get(outcome.address)) for outcome in outcomes]

    def _row(self, outcome: Outcome, planned: ResourceChange | None) -> dict[str, Any]:
        kind, _, name = outcome.address.partition("/")
        record = self.state.resources.get(outcome.address) if self.state else None
        if record is not None:
            remote_id = record.remote_id
        else:  # deleted, or never created: the id the plan knew, if any
            remote_id = planned.remote_id if planned is not None else None
        from surveyctl.state import RECORD_TYPES

        record_type = RECORD_TYPES.get(kind)
        return {
            "address": outcome.address,
            "kind": kind,
            "name": name,
            "action": outcome.action,
            "status": STATUS[outcome.status],
            "interrupted": outcome.message == _interrupted(),
            "message": outcome.message,
            "id_name": record_type.id_name if record_type is not None else None,
            "id": remote_id,
        }


def _interrupted() -> str:
    from surveyctl.reconcile.apply import INTERRUPTED

    return INTERRUPTED
