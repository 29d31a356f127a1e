"""The resource kinds surveyctl manages, one module each, and their registry.

`base.Kind` says what a kind provides; `survey` and `group` register the two the marketplace
has. A new kind is one module that subclasses `Kind` and calls `register`; the planner,
applier, refresh, recovery, tamper checks, targets, progress and renderers need no edit.
"""

from surveyctl.reconcile.kinds import group, survey  # noqa: F401,E402 (they register themselves)
from surveyctl.reconcile.kinds.base import (
    Kind,
    Skipped,
    described,
    get,
    in_order,
    of_address,
    register,
    unregister,
)

__all__ = [
    "Kind",
    "Skipped",
    "described",
    "get",
    "in_order",
    "of_address",
    "register",
    "unregister",
]
