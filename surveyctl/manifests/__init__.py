"""Manifests -> desired state, with every problem reported at its file and line.

The one entry point is `load_manifests(paths, catalog)`:

```python
state, diagnostics = load_manifests(["examples/"], catalog)   # catalog=None: offline
if diagnostics.has_errors: ...       # each Diagnostic has severity, summary, location
state.surveys["brand-tracker-us"].body()   # the exact API body: generators expanded,
                                           # attribute names resolved to codes
```
Stages, each adding to the same Diagnostics so that one run shows every problem:
`load` (YAML with file:line marks) -> `schema` (manifest.schema.json) -> `programs` (a
SurveyProgram becomes one Survey document per market and wave, each checked by `schema` like a
written one, plus the exclusion groups between waves) -> `build` (model
objects; `generate` expands quota generators) -> `rules` (checks across fields and
manifests) -> `names` (attribute names resolved and codes checked against the catalogue of
each survey's locale; skipped when `catalog` is None). `load_desired` is the same but raises
ManifestError on any error, for callers that need a valid state or nothing.
"""

from __future__ import annotations

from collections.abc import Iterable
from pathlib import Path
from typing import TYPE_CHECKING

from surveyctl.catalog import Catalog
from surveyctl.errors import Location
from surveyctl.manifests import build, names, programs, rules, schema
from surveyctl.manifests.budget import Budget, Budgets
from surveyctl.manifests.diagnostics import Diagnostic, Diagnostics, ManifestError
from surveyctl.manifests.load import Document, discover, load_file
from surveyctl.memory import collector_paused
from surveyctl.model import DesiredState
from surveyctl.resources import MANIFEST_KINDS, PROGRAM

if TYPE_CHECKING:
    from surveyctl.manifests.cache import ParsedCache

__all__ = [
    "Diagnostic",
    "Diagnostics",
    "ManifestError",
    "load_desired",
    "load_manifests",
]


def load_manifests(
    paths: Iterable[str | Path],
    catalog: Catalog | None = None,
    cache: ParsedCache | None = None,
    within: Path | None = None,
) -> tuple[DesiredState, Diagnostics]:
    """The desired state of the manifests under `paths`, and everything found wrong.

    Resources whose manifest has errors are left out of the state; check
    `diagnostics.has_errors` before using it. With `cache`, files read cleanly before are not
    parsed again (surveyctl.manifests.cache). Links in the folders walked must lead inside the
    folder or `within`, the project (see `surveyctl.manifests.load`).
    """
    with collector_paused():
        return _load_manifests(list(paths), catalog, cache, within)


def _load_manifests(
    paths: list[str | Path],
    catalog: Catalog | None,
    cache: ParsedCache | None,
    within: Path | None,
) -> tuple[DesiredState, Diagnostics]:
    diagnostics = Diagnostics()
    files = discover(paths, diagnostics, within)
    if not files and not diagnostics.has_errors:
        shown = ", ".join(str(p) for p in paths) or "the current folder"
        diagnostics.error(f"No manifest files (*.yaml, *.yml) found in {shown}")
    state = DesiredState(files=[str(f) for f in files])
    pack = cache.pack(paths) if cache is not None else None
    documents = [doc for path in files for doc in load_file(path, diagnostics, pack)]
    if pack is not None:
        pack.save()
    specs = {}
    budgets = Budgets()  # what each file's programs and generators may make
    unbuilt: set[str] = set()
    defined: dict[tuple[str, str], Location] = {}
    partial: list[Document] = []  # Survey documents failing the schema: valid parts checked
    for document in documents:
        valid = schema.check_document(document, diagnostics)
        kind, name = document.data.get("kind"), document.data.get("name")
        if isinstance(kind, str) and isinstance(name, str):
            key = (kind, name)
            if key in defined:
                first = defined[key]
                diagnostics.error(
                    f"{kind} {name!r} is defined twice; first in {first.file} at line {first.line}",
                    document.data.where("name"),
                )
                continue
            defined[key] = document.data.where("name")
        if not valid:
            # A Survey that failed the schema, or a document whose kind is misspelt (`kind:
            # survey`): a group naming it is not told again that no survey has that name.
            if (kind == "Survey" or kind not in MANIFEST_KINDS) and isinstance(name, str):
                unbuilt.add(name)
            if kind == "Survey":
                partial.append(document)
            continue
        budget = budgets.of(document.location.file)
        if kind == PROGRAM:
            _add_program(document, state, specs, diagnostics, unbuilt, budget)
            continue
        _add(document, state, specs, diagnostics, budget)
    _check_program_names(defined, diagnostics)
    for survey in state.surveys.values():
        rules.check_survey(survey, specs[survey.name], diagnostics)
    rules.check_groups(state, diagnostics, frozenset(unbuilt))
    for document in partial:
        built = build.partial_survey(document, diagnostics, budgets.of(document.location.file))
        if built is None:
            continue
        survey, quotas_whole = built
        rules.check_partial_survey(survey, document.data["spec"], diagnostics, quotas_whole)
        if catalog is not None and build.has_locale(survey):
            names.resolve_survey(survey, catalog, diagnostics)
    for survey in state.surveys.values():
        if catalog is not None:
            names.resolve_survey(survey, catalog, diagnostics)
        elif not survey.resolved:
            diagnostics.note(
                f"Survey {survey.name!r} names attributes; they are resolved and checked only "
                "against a catalogue (not with --offline)",
                survey.location,
            )
    return state, diagnostics


def _check_program_names(
    defined: dict[tuple[str, str], Location], diagnostics: Diagnostics
) -> None:
    """A program's name stands for its members in `--target` and `render --name`, so a Survey
    or an ExclusionGroup of that name could not be named there: one of them would be planned,
    applied or printed in place of the other."""
    for (kind, name), where in defined.items():
        program = defined.get((PROGRAM, name))
        if program is None or kind not in _BUILDERS:
            continue
        diagnostics.error(
            f"{kind} {name!r} has the name of the SurveyProgram in {program.file} at line "
            f"{program.line}, which stands for the program's members in --target and render "
            "--name; rename one of them (`surveyctl state mv` moves what the state holds of it)",
            where,
        )


def _add(
    document: Document, state: DesiredState, specs: dict, diagnostics: Diagnostics, budget: Budget
) -> None:
    kind = document.data["kind"]
    if kind not in _BUILDERS:  # the schema admits only known kinds; never guess another
        raise ValueError(f"no builder for manifest kind {kind!r}")
    _BUILDERS[kind](document, state, specs, diagnostics, budget)


def _add_survey(
    document: Document, state: DesiredState, specs: dict, diagnostics, budget: Budget
) -> None:
    survey = build.survey(document, diagnostics, budget)
    state.surveys[survey.name] = survey
    specs[survey.name] = document.data["spec"]


def _add_group(
    document: Document, state: DesiredState, specs: dict, diagnostics, budget: Budget
) -> None:
    group = build.exclusion_group(document)
    state.groups[group.name] = group


# manifest kind -> how its document joins the desired state
_BUILDERS = {"Survey": _add_survey, "ExclusionGroup": _add_group}


def _add_program(
    document: Document,
    state: DesiredState,
    specs: dict,
    diagnostics: Diagnostics,
    unbuilt: set,
    budget: Budget,
) -> None:
    """The members of a SurveyProgram, each checked and built like a written Survey."""
    expansion = programs.expand(document, diagnostics, budget)
    state.programs[expansion.program.name] = expansion.program
    for member_document, member in expansion.surveys:
        # Checked and built apart: members share the template's lines, so their findings
        # repeat one another and the shared collection keeps each once, while the checks
        # judge a member by what they found in it (`len(diagnostics)` before and after).
        found = Diagnostics()
        survey = None
        if schema.check_document(member_document, found):
            survey = build.survey(member_document, found, budget)
        for item in found:
            summary, location = programs.as_member_finding(item, member, member_document)
            diagnostics.add(item.severity, summary, location)
        if survey is None:
            unbuilt.add(member.name)
            continue
        survey.name, survey.member = member.name, member
        state.surveys[survey.name] = survey
        specs[survey.name] = member_document.data["spec"]
    for group in expansion.groups:
        state.groups[group.name] = group


def load_desired(
    paths: Iterable[str | Path],
    catalog: Catalog | None = None,
    cache: ParsedCache | None = None,
    within: Path | None = None,
) -> DesiredState:
    """Like load_manifests, but raises ManifestError when any manifest has an error."""
    state, diagnostics = load_manifests(paths, catalog, cache, within)
    if diagnostics.has_errors:
        raise ManifestError(diagnostics)
    return state
