"""Configuration: `surveyctl.yaml` and environment variables -> the chosen Environment.

```yaml
required_version: ">=0.1.0, <0.3"   # the versions of surveyctl this project allows
manifests: [surveys/, groups/]      # read when no paths are given
environments:
  staging:    {host: https://staging.example.com, api_key_env: SURVEYCTL_STAGING_KEY}
  production: {host: https://api.example.com, api_key_env: SURVEYCTL_PRODUCTION_KEY,
               protected: true,
               state: {backend: postgres, dsn_env: SURVEYCTL_STATE_DSN, schema: surveyctl},
               guards: {max_spend_increase: 5000, max_destroy: 0, max_changed_percent: 30}}
default_environment: staging
```
`sandbox` is built in: the embedded local marketplace, data in `.surveyctl/sandbox.db` of the
project root (the folder of surveyctl.yaml, else the repository root, else the current folder).
It is the environment when nothing is configured; `SURVEYCTL_SANDBOX_STRICT=1` serves it
strict (request fields the API's schemas do not list are refused, as `sandbox serve --strict`).
surveyctl.yaml is looked for in the current folder and its parents up to the repository root,
as git looks for `.git`. The key of an environment is read from the variable it names, never
from a file; so is the connection string of a PostgreSQL state.

The file is read with the same bounds as manifests (see `surveyctl.yamlsafe`), and every
mistake in it is one ConfigError with the file, the line and the setting, and the closest
known name for a misspelt one: `surveyctl.yaml:2:1: unknown setting 'enviroments' (did you
mean 'environments'?); ...`. A setting this surveyctl does not know is refused, never ignored
(one a newer surveyctl added may be a guard), and the message says to upgrade if it is one.
`required_version` (see `surveyctl.version_pin`) is checked before anything else in the file:
a surveyctl it excludes refuses every command that reads the file.
"""

from __future__ import annotations

import os
from collections.abc import Iterable
from dataclasses import dataclass, field
from pathlib import Path

from surveyctl import __version__
from surveyctl.config_checks import check_environment_name, check_required_version, only_known
from surveyctl.environments import Environment, read_environment
from surveyctl.errors import ConfigError, Location
from surveyctl.files import shown_path
from surveyctl.suggest import suggest
from surveyctl.variables import actor_name, libpq_defaults, sandbox_strict
from surveyctl.yamlsafe import (
    Limits,
    Loaded,
    MarkedDict,
    MarkedList,
    YamlProblem,
    load_documents,
    read_text,
    special_file_kind,
)

CONFIG_FILE = "surveyctl.yaml"
SANDBOX = "sandbox"
ENV_VARIABLE = "SURVEYCTL_ENV"
WORK_DIR = ".surveyctl"
SETTINGS = ("manifests", "environments", "default_environment", "required_version")
# A configuration is a few lines; these bounds only stop a hostile file early.
LIMITS = Limits("configuration file", max_bytes=1_000_000, max_values=100_000, max_depth=16)


@dataclass(frozen=True)
class Config:
    """The project's settings; `root` is the folder of surveyctl.yaml, else the repository root,
    else the current folder."""

    root: Path
    path: Path | None = None
    manifests: list[str] = field(default_factory=list)
    # Where each `manifests:` entry is written in surveyctl.yaml, for the error that one of
    # them names nothing.
    manifest_places: tuple[Location | None, ...] = ()
    environments: dict[str, Environment] = field(default_factory=dict)
    default_environment: str = SANDBOX
    # Without a file: the folder the search for one started from (for messages).
    searched_from: Path | None = None

    def describe_source(self) -> str:
        """Where the settings come from, for `--debug` and for an unknown environment."""
        if self.path is not None:
            return f"configuration {self.path.resolve()}"
        return (
            f"no {CONFIG_FILE} found; using the embedded sandbox (data in {self.work_dir}; "
            f"looked in {self.looked_in()})"
        )

    def looked_in(self) -> str:
        """The folders `find_config` searched, in words."""
        start = (self.searched_from or self.root).resolve()
        top = repository_root(start)
        if top is None:
            return f"{start}, which is not in a git repository"
        if top == start:
            return f"{start}, the repository root"
        return f"{start} and its parent folders up to the repository root {top}"

    @property
    def project(self) -> Path:
        """The folder the manifests belong to (see `project_folder`)."""
        return project_folder(self.root)

    def manifest_paths(self, targets: Iterable[Path] = ()) -> list[Path]:
        """The targets as given, else the `manifests:` of surveyctl.yaml, relative to the
        current folder when they lie inside it (findings then read `surveys/us.yaml:6:1`, as
        in a pull request, not the path of the machine that ran the plan)."""
        given = list(targets)
        if given:
            return given
        if self.manifests:
            missing = [
                index
                for index, entry in enumerate(self.manifests)
                if _names_nothing(self.root / entry)
            ]
            if missing:
                named = ", ".join(repr(self.manifests[i]) for i in missing)
                first = missing[0]
                place = self.manifest_places[first] if first < len(self.manifest_places) else None
                one = len(missing) == 1
                raise ConfigError(
                    f"manifests lists {named}, which {'is' if one else 'are'} not in "
                    f"{self.root}: make {'it' if one else 'them'}, or take "
                    f"{'the entry' if one else 'the entries'} out",
                    place,
                )
            return [shown_path(self.root / entry) for entry in self.manifests]
        raise ConfigError(
            "no manifests given: name files or folders, or list them under 'manifests:' in "
            "surveyctl.yaml"
        )

    @property
    def work_dir(self) -> Path:
        return self.root / WORK_DIR

    @property
    def state_dir(self) -> Path:
        return self.work_dir / "state"

    @property
    def cache_dir(self) -> Path:
        return self.work_dir / "cache"

    @property
    def sandbox_db(self) -> Path:
        return self.work_dir / "sandbox.db"

    @property
    def sandbox_strict(self) -> bool:
        """Whether the embedded sandbox refuses request fields the API's schemas do not list
        (`$SURVEYCTL_SANDBOX_STRICT` set to 1, true, yes or on), as `sandbox serve --strict`."""
        return sandbox_strict()

    def variable(self, name: str) -> str | None:
        """The environment variable `name` (None when it is not set), for a state backend's
        settings that name one (the core reads no variable itself)."""
        return os.environ.get(name)

    def libpq_defaults(self) -> dict[str, str]:
        return libpq_defaults()

    def actor_name(self) -> str | None:
        return actor_name()

    def holds_manifest(self, path: Path) -> bool:
        """Whether a plan without PATHS reads `path`: True when `manifests:` is not set (every
        plan then names its PATHS), else when `path` is one of its entries or inside one."""
        if not self.manifests:
            return True
        target = path.resolve()
        for entry in self.manifests:
            listed = (self.root / entry).resolve()
            if target == listed or listed in target.parents:
                return True
        return False

    def environment(self, name: str | None = None) -> Environment:
        """`name`, else $SURVEYCTL_ENV, else default_environment, else the sandbox."""
        chosen = name or os.environ.get(ENV_VARIABLE) or self.default_environment
        if chosen in self.environments:
            return self.environments[chosen]
        if chosen == SANDBOX:
            return Environment(name=SANDBOX)
        known = sorted({SANDBOX, *self.environments})
        where = f" in {_shown(self.path)}" if self.path else ""
        if not name and os.environ.get(ENV_VARIABLE):  # else the user looks for it in vain
            where = f" (from ${ENV_VARIABLE}){where}"
        # `prod` for `production`: environments are often called by a short name.
        hint = suggest(chosen, known, abbreviated=True)
        nothing = (
            ""
            if self.path
            else f" (no {CONFIG_FILE} found in {self.looked_in()}; run surveyctl in the project "
            "or give --config PATH)"
        )
        raise ConfigError(
            f"unknown environment {chosen!r}{where}{hint}; known: {', '.join(known)}{nothing}"
        )


def repository_root(folder: Path) -> Path | None:
    """The nearest of `folder` and its parents that holds `.git` (a folder, or the file of a
    worktree), or None outside a repository."""
    folder = folder.resolve()
    for candidate in (folder, *folder.parents):
        if (candidate / ".git").exists():
            return candidate
    return None


def project_folder(root: Path) -> Path:
    """The folder the manifests of a project at `root` belong to: its repository, else `root`.
    `manifests:` entries, and links met in the folders they name, must stay inside it."""
    return repository_root(root) or root.resolve()


def find_config(cwd: Path) -> Path | None:
    """surveyctl.yaml of `cwd`, else of its parents up to the repository root, as git looks
    for `.git`; outside a repository only `cwd` is looked at, so that a stray file in a
    shared parent (/tmp, a home folder) is never picked up."""
    cwd = cwd.resolve()
    top = repository_root(cwd)
    folders = [cwd] if top is None else [cwd, *cwd.parents[: len(cwd.parts) - len(top.parts)]]
    for folder in folders:
        if (folder / CONFIG_FILE).is_file():
            return folder / CONFIG_FILE
    return None


def load_config(path: Path | None = None, cwd: Path | None = None) -> Config:
    """Reads `path`, or the surveyctl.yaml that `find_config` finds from `cwd`, else the
    defaults, whose project root (where `.surveyctl/` lives) is the repository root, or `cwd`
    outside a repository.

    Every mistake in the file is a ConfigError naming the file, the line and the setting,
    with the closest known name for a misspelt one.
    """
    cwd = cwd or Path.cwd()
    if path is None:
        path = find_config(cwd)
        if path is None:
            return Config(root=repository_root(cwd) or cwd, searched_from=cwd)
    document = _read(path)
    if document is None:
        return Config(root=path.resolve().parent, path=path)
    data = document.data
    if not isinstance(data, MarkedDict):
        raise ConfigError(
            "the configuration must be a mapping of settings (manifests, environments, "
            "default_environment, required_version)",
            document.location,
        )
    # The pin first: a surveyctl it excludes is told to change version, not what else it
    # does not know of the file (a setting added by the version the team pins).
    check_required_version(data, __version__)
    only_known(data, SETTINGS, "")
    manifests = data.get("manifests") or []
    if not isinstance(manifests, list) or not all(isinstance(m, str) for m in manifests):
        raise ConfigError(
            "manifests must be a list of paths, such as [surveys/, groups/]",
            data.where("manifests"),
        )
    _within_project(manifests, path.resolve().parent, data)
    places = tuple(
        manifests.where(index) if isinstance(manifests, MarkedList) else data.where("manifests")
        for index in range(len(manifests))
    )
    specs = data.get("environments")
    if specs is not None and not isinstance(specs, MarkedDict):
        raise ConfigError(
            "environments must be a mapping of names to {host, api_key_env}",
            data.where("environments"),
        )
    for name in specs or {}:
        check_environment_name(specs, name)
        if name.casefold() == SANDBOX:
            # Its state (.surveyctl/state/sandbox.json) names the embedded sandbox's surveys:
            # another host under that name would be planned against their ids.
            raise ConfigError(
                f"environment name {name!r} is the embedded sandbox's, which needs no entry; "
                "name this environment otherwise (such as 'marketplace-sandbox')",
                specs.where(name),
            )
    environments = {name: read_environment(specs, name) for name in specs or {}}
    default = data.get("default_environment") or SANDBOX
    if not isinstance(default, str):
        raise ConfigError(
            f"default_environment must be the name of an environment, not {default!r}",
            data.where("default_environment"),
        )
    if default != SANDBOX and default not in environments:
        defined = sorted({SANDBOX, *environments})
        hint = suggest(default, defined)
        raise ConfigError(
            f"default_environment {default!r} is not defined{hint}; defined: {', '.join(defined)}",
            data.where("default_environment"),
        )
    return Config(
        root=path.resolve().parent,
        path=path,
        manifests=manifests,
        manifest_places=places,
        environments=environments,
        default_environment=default,
    )


def _within_project(manifests: list[str], root: Path, data: MarkedDict) -> None:
    """Each `manifests:` entry names a path inside the repository of surveyctl.yaml (or its
    folder, outside a repository): the file comes with the code under review, and a plan
    that a pull request could point at `/` would walk the whole machine. A NUL, which no path
    can hold (the system ends a path there), is refused at its line too."""
    top = project_folder(root)
    for index, entry in enumerate(manifests):
        where = manifests.where(index) if isinstance(manifests, MarkedList) else data.location
        if "\0" in entry:
            raise ConfigError(
                f"manifests entry {entry!r} must not contain a NUL character: no path holds one",
                where,
            )
        if not (root / entry).resolve().is_relative_to(top):
            raise ConfigError(
                f"manifests entry {entry!r} is outside {top}; list folders and files inside "
                "it (name others on the command line)",
                where,
            )


def _names_nothing(path: Path) -> bool:
    """Whether nothing is at `path`; another failure to look (a name too long) is left to the
    reading of the manifests, which reports it with its reason."""
    try:
        os.lstat(path)
    except (FileNotFoundError, NotADirectoryError):
        return True
    except OSError:
        return False
    return False


def _shown(path: Path) -> str:
    """The path as messages show it: relative to the current folder when inside it."""
    if path.is_absolute():
        try:
            return str(path.relative_to(Path.cwd()))
        except ValueError:
            pass
    return str(path)


def _read(path: Path) -> Loaded | None:
    """The one YAML document of `path` (None when there is none); ConfigError with
    file:line."""
    special = special_file_kind(path)
    if special is not None:  # else it would be called missing: it is no regular file
        raise ConfigError(f"{path} is {special}, not a regular file: only files are read")
    try:
        is_file = path.is_file()
    except OSError as exc:  # pathlib answers False for a missing path, not for a name too long
        raise ConfigError(f"{path}: cannot read the configuration file: {exc.strerror}") from exc
    if not is_file:
        raise ConfigError(f"{path}: no such configuration file")
    problems: list[tuple[str, Location]] = []
    try:
        shown = _shown(path)
        text = read_text(path, LIMITS, shown)
        documents = load_documents(text, shown, LIMITS, lambda *problem: problems.append(problem))
    except YamlProblem as problem:
        raise ConfigError(problem.summary, problem.location) from None
    if problems:
        raise ConfigError(*problems[0])
    if len(documents) > 1:
        raise ConfigError("the configuration must be one YAML document", documents[1].location)
    return documents[0] if documents and documents[0].data is not None else None
