"""The output formats surveyctl knows, each registered once by its own module.

A format module (`text`, `json`, `markdown`) renders a plan, and may render an apply's report
and a plan that could not be made; it ends with one `register(Format(...))` line, and
`MODULES` names it. `plan`, `show` and `apply` offer `names()` and render with `get(name)`;
nothing else names a format. Adding one is one new module and its name in `MODULES`.

The format modules are imported the first time `names()` or `get()` is called, not with this
module: a command's `--help` lists its formats without loading the renderers and the plan
model behind them.
"""

from __future__ import annotations

import importlib
from collections.abc import Callable
from dataclasses import dataclass
from typing import TYPE_CHECKING

from surveyctl.errors import SurveyctlError

if TYPE_CHECKING:
    from surveyctl.manifests.diagnostics import Diagnostic
    from surveyctl.reconcile.plan import Plan
    from surveyctl.render.report import ApplyReport


@dataclass(frozen=True)
class Format:
    """How one format shows a plan (`color`: the terminal may colour it), an apply's report
    (None: apply does not offer it), and a plan that could not be made (None: the error on
    stderr is all). `report_holds_plan`: the report carries the plan, so apply shows the plan
    as text on stderr and writes the report alone on stdout (one document for a program)."""

    name: str
    plan: Callable[[Plan, bool], str]
    apply: Callable[[ApplyReport, bool], str] | None = None
    # (environment, the error, the manifest findings behind it) -> the failed plan's output
    failure: Callable[[str, str, list[Diagnostic]], str] | None = None
    report_holds_plan: bool = False


# The modules of the formats surveyctl ships, under surveyctl.render; each registers one. The
# first is the default.
MODULES = ("text", "json", "markdown")

_FORMATS: dict[str, Format] = {}
_loaded = False


def _load() -> None:
    global _loaded
    if not _loaded:
        for module in MODULES:
            importlib.import_module(f"surveyctl.render.{module}")
        _loaded = True


def register(output: Format) -> Format:
    """Makes `output` known by its name (a second one of the same name replaces it)."""
    _FORMATS[output.name] = output
    return output


def unregister(name: str) -> None:
    """Forgets a format (tests that register one of their own)."""
    _FORMATS.pop(name, None)


def names(for_apply: bool = False) -> list[str]:
    """The formats a plan can be shown in (or an apply reported in), the default first."""
    _load()
    chosen = [f.name for f in _FORMATS.values() if not for_apply or f.apply is not None]
    # MODULES' order (the default first), whatever order they registered in; others after.
    return sorted(chosen, key=lambda name: MODULES.index(name) if name in MODULES else len(MODULES))


def get(name: str) -> Format:
    """The format called `name`."""
    _load()
    try:
        return _FORMATS[name]
    except KeyError:
        raise SurveyctlError(
            f"unknown output format {name!r}; known: {', '.join(names())}"
        ) from None
