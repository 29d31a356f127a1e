"""What a plan or apply run is given and gives back, the same for the CLI, the benchmarks and
the tests: its options (`RunOptions`), the environment's marketplace, state and catalogue
(`Workspace`), the callables that talk to a person (`ApplyHooks`) and what an apply did
(`ApplyRun`).

The workflows themselves are `surveyctl.reconcile.plan_run` (read the manifests, plan them
against state and live bodies) and `surveyctl.reconcile.apply_run` (the state lock, a saved or
fresh plan, the approval rule, the writes), with a saved plan's checks in
`surveyctl.reconcile.saved_plan`. What talks to a person (showing the plan, asking, reporting
progress) is passed in as callables, so no workflow touches a terminal.
"""

from __future__ import annotations

from collections.abc import Callable
from dataclasses import dataclass
from pathlib import Path
from typing import TYPE_CHECKING

from surveyctl.reconcile.choices import DEFAULT_PARALLELISM

if TYPE_CHECKING:  # what a run reads and makes, loaded by the workflow that runs it
    from surveyctl.catalog import Catalog
    from surveyctl.config import Config, Environment
    from surveyctl.manifests.cache import ParsedCache
    from surveyctl.reconcile.apply import ApplyResult, Outcome
    from surveyctl.reconcile.marketplace import Marketplace
    from surveyctl.reconcile.plan import Plan
    from surveyctl.reconcile.progress import ReadReport
    from surveyctl.state import StateBackend


@dataclass(frozen=True)
class RunOptions:
    """How to plan or apply; the same options for every caller.

    `targets` are manifest files or folders (default: `manifests:` of surveyctl.yaml), or, for
    apply, one saved plan file. `parallelism` bounds the requests in flight and sizes the
    client's connection pool. `env_named` says the environment was named explicitly
    (`--env`), which a protected environment requires before applying without a question
    (`auto_approve` or a saved plan). `overrides` let a plan over the environment's guards
    through (surveyctl.reconcile.guards: "spend-increase", "destroy", "large-change").
    `refresh_only` compares the live resources with the state instead of the manifests (which
    are not read): a plan shows the drift, an apply records the live values as last applied.
    """

    targets: tuple[Path, ...] = ()
    destroy: bool = False
    parallelism: int = DEFAULT_PARALLELISM
    lock_timeout: float = 0.0
    auto_approve: bool = False
    env_named: bool = False
    refresh_only: bool = False
    # --target: only these addresses (and what they depend on) are planned; see targets.py.
    target_addresses: tuple[str, ...] = ()
    overrides: frozenset[str] = frozenset()
    # False: plan against the state alone, reading no survey (`plan --refresh=false`).
    refresh: bool = True
    # Apply from an empty local state under CI=true on a protected environment (placement.py).
    allow_local_state: bool = False


@dataclass
class Workspace:
    """One environment's marketplace, state and catalogue, as a run uses them.

    `marketplace` is called when the first request is due, so a run that fails early (bad
    manifests, a held lock) opens no connection and starts no embedded sandbox.
    """

    config: Config
    environment: Environment
    state: StateBackend
    marketplace: Callable[[], Marketplace]
    catalog: Catalog | None = None
    # Manifest files read before (surveyctl.manifests.cache); None: each file is parsed.
    manifest_cache: ParsedCache | None = None
    # Called as each live body of a plan is read: (address, done, total); see progress.py.
    on_read: ReadReport | None = None
    # Told of what a person should know before the plan is shown (an empty state), for stderr.
    on_warning: Callable[[str], None] | None = None


@dataclass
class ApplyHooks:
    """What apply needs from whoever talks to the person running it.

    `show(plan)` presents the plan; `confirm(environment_name)` asks for approval and returns
    the answer, and is None when there is nobody to ask (no terminal); `on_outcome` reports
    each write as it completes; `on_interrupt(signal_name, first)` is told of SIGINT,
    SIGTERM and SIGHUP while the writes run (it runs in the signal handler: no buffered output).
    """

    show: Callable[[Plan], None] = lambda plan: None
    confirm: Callable[[str], bool] | None = None
    on_outcome: Callable[[Outcome], None] | None = None
    on_interrupt: Callable[[str, bool], None] | None = None


@dataclass
class ApplyRun:
    """What an apply did: the plan it carried out and, when it wrote, the outcome of each write."""

    plan: Plan
    result: ApplyResult | None = None
    saved: bool = False
    refreshed: int = 0  # resources whose live values an `apply --refresh-only` recorded
