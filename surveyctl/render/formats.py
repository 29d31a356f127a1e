"""The output formats surveyctl knows, each registered once by its own module.

A format module (`text`, `json`, `markdown`) renders a plan, and may render an apply's report
and a plan that could not be made; it ends with one `register(Format(...))` line, and
`surveyctl.render` imports it. `plan`, `show` and `apply` offer `names()` and render with
`get(name)`; nothing else names a format. Adding one is one new module and one import line.
"""

from __future__ import annotations

from collections.abc import Callable
from dataclasses import dataclass
from typing import TYPE_CHECKING

from surveyctl.errors import SurveyctlError

if TYPE_CHECKING:
    from surveyctl.manifests.diagnostics import Diagnostic
    from surveyctl.reconcile.plan import Plan
    from surveyctl.render.report import ApplyReport

DEFAULT = "text"


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


_FORMATS: dict[str, Format] = {}


def register(output: Format) -> Format:
    """Makes `output` known by its name (a second one of the same name replaces it)."""
    _FORMATS[output.name] = output
    return output


def unregister(name: str) -> None:
    """Forgets a format (tests that register one of their own)."""
    _FORMATS.pop(name, None)


def names(for_apply: bool = False) -> list[str]:
    """The formats a plan can be shown in (or an apply reported in), the default first."""
    chosen = [f.name for f in _FORMATS.values() if not for_apply or f.apply is not None]
    return sorted(chosen, key=lambda name: name != DEFAULT)


def get(name: str) -> Format:
    """The format called `name`."""
    try:
        return _FORMATS[name]
    except KeyError:
        raise SurveyctlError(
            f"unknown output format {name!r}; known: {', '.join(names())}"
        ) from None
