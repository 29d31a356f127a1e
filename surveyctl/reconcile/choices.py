"""The choices a plan or an apply is run with, by name: how many requests it sends at once, and
the overrides of its guards that it records. The commands' options read them from here, so that
`surveyctl plan --help` lists them without loading the workflow that acts on them."""

from __future__ import annotations

# How many reads (and writes) run at once unless a command says otherwise, and at most.
DEFAULT_PARALLELISM = 10
MAX_PARALLELISM = 64

# The overrides of the guards (surveyctl.reconcile.guards), recorded in a plan made with them.
SPEND_INCREASE = "spend-increase"
DESTROY = "destroy"
LARGE_CHANGE = "large-change"
OVERRIDES = (SPEND_INCREASE, DESTROY, LARGE_CHANGE)


def flag(override: str) -> str:
    """The command-line option of an override: `--allow-destroy` (and `--adopt`, the one
    identity option a saved plan records beside them: surveyctl.reconcile.identity)."""
    return "--adopt" if override == "adopt" else f"--allow-{override}"
