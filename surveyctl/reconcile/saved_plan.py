"""A saved plan as apply takes it: told apart from manifests among apply's targets, read, and
checked against its environment, the state and a fresh plan of the manifests it names.

Kept apart from the apply workflow because these are the checks that make a file from
elsewhere (a CI artifact) safe to apply: `surveyctl.reconcile.planfile` reads the file and its
signature, `surveyctl.reconcile.tamper` compares it with the fresh plan made here.
"""

from __future__ import annotations

import dataclasses
from pathlib import Path

from surveyctl.errors import ConfigError, SurveyctlError
from surveyctl.reconcile.plan import Plan
from surveyctl.reconcile.plan_run import check_destroy_scope, plan_run
from surveyctl.reconcile.planfile import PlanFileError, read_plan
from surveyctl.reconcile.run import RunOptions, Workspace
from surveyctl.reconcile.tamper import applied_overrides, check_state, recheck, source_targets
from surveyctl.variables import plan_signing_key


def looks_like_plan(path: Path) -> bool:
    """A file not named .yaml or .yml: a saved plan when it is apply's only target."""
    return path.is_file() and path.suffix not in (".yaml", ".yml")


def saved_plan_path(targets: tuple[Path, ...]) -> Path | None:
    """One target that is a file but not YAML is a saved plan."""
    if len(targets) == 1 and looks_like_plan(targets[0]):
        return targets[0]
    return None


def load_saved(path: Path, workspace: Workspace, options: RunOptions) -> Plan:
    """The saved plan at `path`, re-checked: its environment, its state, and each of its
    changes against a fresh plan of the manifests it names (`surveyctl.reconcile.tamper`)."""
    read = read_plan(path, plan_signing_key())
    saved = read.plan
    name = workspace.environment.name
    if saved.environment != name:
        raise SurveyctlError(
            f"{path} was planned for environment {saved.environment!r}, not {name!r}"
        )
    overrides = applied_overrides(path, read, options.overrides)
    state = workspace.state.load()
    check_state(saved, state)
    targets = source_targets(saved, workspace.config.root, path)
    try:
        check_destroy_scope(workspace.config, targets, saved.destroy)
    except ConfigError:
        raise PlanFileError(
            f"{path} destroys what its manifests ({', '.join(saved.sources)}) do not describe, "
            "but they are not the manifests: of surveyctl.yaml, which may describe it; make a "
            "new plan with --destroy and no PATHS"
        ) from None
    # The fresh plan is made with the overrides the plan may carry and the guards as
    # configured now: a limit tightened since the plan was made still holds.
    again = dataclasses.replace(
        options, targets=targets, destroy=saved.destroy, overrides=overrides, target_addresses=()
    )
    return recheck(saved, plan_run(workspace, again, state=state), verified=read.verified)
