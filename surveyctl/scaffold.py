"""What `surveyctl init` writes into a new repository, and the check that it overwrites nothing.

The files: `surveyctl.yaml` (production with its state in PostgreSQL, as the CI workflows
expect, in a schema named after the project's folder), a `.gitignore` for `.surveyctl/` (the
sandbox database, caches and local state), one example manifest that validates and plans against
the sandbox, the manifests' JSON Schema for editors (`schemas/manifest.schema.json`, named on
the example's first line), and the CI workflows under `.github/workflows/`. The workflows are
the ones of `examples/ci/`, read from the installation (a checkout has them at the repository
root; a built wheel carries them as `surveyctl/_ci`), so `init` always writes the workflows of
the surveyctl that runs it.
"""

from __future__ import annotations

import hashlib
import os
import re
import unicodedata
from dataclasses import dataclass
from pathlib import Path

from surveyctl.errors import SurveyctlError
from surveyctl.files import file_in_the_way, os_error_message, write_atomically
from surveyctl.schemafiles import schemas_dir

_PACKAGE = Path(__file__).resolve().parent

# The secrets the CI workflows need: the variables surveyctl.yaml names for production.
SECRETS = ("SURVEYCTL_PRODUCTION_KEY", "SURVEYCTL_STATE_DSN")

CONFIG = """\
# surveyctl configuration (see docs/workflow.md of surveyctl).
# With no --env, commands target the embedded sandbox: a local marketplace, no account needed.
manifests: [surveys/]
environments:
  production:
    host: https://api.example.com             # your marketplace host
    api_key_env: SURVEYCTL_PRODUCTION_KEY     # the variable (or CI secret) holding the key
    protected: true                           # apply --auto-approve needs --env production
    # The state in PostgreSQL: a CI checkout starts without .surveyctl/, so a state kept in a
    # file there would be empty on every run. The connection string is read from the variable.
    # The schema is this project's own: projects that share a database, a schema and an
    # environment name share one state, and each would plan and write the other's surveys.
    state: {{backend: postgres, dsn_env: SURVEYCTL_STATE_DSN, schema: {schema}}}
"""
# The schema of a folder whose name gives nothing to build one from (`init` in `/`, `2026`).
FALLBACK_SCHEMA = "surveys"
_SCHEMA_LENGTH = 63  # PostgreSQL's longest name

SCHEMA_PATH = "schemas/manifest.schema.json"

GITIGNORE = """\
# surveyctl's working folder: the sandbox database, catalogue caches and local state.
.surveyctl/
"""

EXAMPLE = """\
# yaml-language-server: $schema=../schemas/manifest.schema.json
# An example survey: adults in the US, one quota per gender. `surveyctl plan` shows what
# `surveyctl apply` would create; `surveyctl render` shows the API body with its codes.
kind: Survey
name: example-tracker
spec:
  survey_title: Example tracker
  survey_category_code: 231
  survey_localization: en_US
  completes_required: 200
  expected_ir: 40
  expected_loi: 10
  offer_price: 2.5
  field_time: 14
  live_url: https://survey.example.com/s/example?tid=[%%transaction_id%%]
  qualifications:
    - {attribute: Gender, answers: [Male, Female]}
    - {attribute: Age, range_sets: [{from: 18, to: 99, units: 311}]}
  quotas:
    - generate:
        id: "{gender}"
        interlock:
          gender:
            attribute: Gender
            cells:
              male: {answers: [Male], share: 0.5}
              female: {answers: [Female], share: 0.5}
"""


class ScaffoldError(SurveyctlError):
    """`init` would overwrite a file, or the installation lacks the CI workflows."""


@dataclass(frozen=True)
class ProjectFile:
    """One file of a new project: its path relative to the project folder and its text.

    `extends` marks a file a repository often has already (`.gitignore`): an existing regular
    file is kept and gets the lines of `text` it lacks, where any other file is refused."""

    path: str
    text: str
    extends: bool = False


def workflows_dir() -> Path:
    """The folder holding the CI workflow examples of this installation."""
    for candidate in (_PACKAGE / "_ci", _PACKAGE.parent / "examples" / "ci"):
        if candidate.is_dir():
            return candidate
    raise ScaffoldError("surveyctl's CI workflow examples are missing from this installation")


def state_schema(folder: Path) -> str:
    """The PostgreSQL schema `init` gives the state of the project in `folder`: the folder's
    name (the repository's, which its organisation keeps unique) as a lowercase PostgreSQL
    name, `brand-trackers` -> `brand_trackers`, `Études` -> `etudes`. Never a schema that is
    not the project's own: one PostgreSQL keeps for itself (`pg_temp`, `information_schema`)
    or one other projects share (`public`, `surveyctl`) gets the prefix `surveys_`."""
    original = folder.resolve().name
    words = re.findall(r"[a-z0-9]+", _ascii(original))
    name = "_".join(words)
    if not name or not name[0].isalpha() or _not_the_projects_own(name):
        name = f"{FALLBACK_SCHEMA}_{name}" if name else FALLBACK_SCHEMA
    if _dropped_letters(original):
        # Letters with no ASCII form (Ёлки, 東京) would leave two such folders one schema:
        # a digest of the whole name keeps them apart, the same in every checkout.
        digest = hashlib.sha256(original.encode("utf-8", "surrogatepass")).hexdigest()[:8]
        return f"{name[: _SCHEMA_LENGTH - len(digest) - 1].rstrip('_')}_{digest}"
    return name[:_SCHEMA_LENGTH].rstrip("_")


def _ascii(text: str) -> str:
    """`text` in lower case without its accents (É -> e, ß -> ss): NFKD splits a letter from
    its accent, which is dropped."""
    folded = unicodedata.normalize("NFKD", text.casefold())
    return "".join(c for c in folded if not unicodedata.combining(c))


def _dropped_letters(text: str) -> bool:
    """Whether `text` has a letter or digit that has no ASCII form even without its accent."""
    return any(c.isalnum() and not c.isascii() for c in _ascii(text))


def _not_the_projects_own(schema: str) -> bool:
    # Imported here: the state package imports this module (placement looks for a state in
    # the schema `init` names).
    from surveyctl.state.postgres import DEFAULT_SCHEMA, is_system_schema

    return is_system_schema(schema) or schema in ("public", DEFAULT_SCHEMA)


def project_files(folder: Path) -> list[ProjectFile]:
    """Every file `init` writes into `folder`, in the order it writes them."""
    files = [
        ProjectFile("surveyctl.yaml", CONFIG.format(schema=state_schema(folder))),
        ProjectFile(".gitignore", GITIGNORE, extends=True),
        ProjectFile("surveys/example-tracker.yaml", EXAMPLE),
        # The manifests' JSON Schema, for editors: the example's first line points at it.
        ProjectFile(SCHEMA_PATH, (schemas_dir() / "manifest.schema.json").read_text("utf-8")),
    ]
    for workflow in sorted(workflows_dir().glob("*.yml")):
        files.append(
            ProjectFile(f".github/workflows/{workflow.name}", workflow.read_text(encoding="utf-8"))
        )
    return files


def write_project(folder: Path) -> list[tuple[Path, str]]:
    """Writes the project files into `folder`, each with what was done to it ("wrote",
    "extended", "kept": an existing `.gitignore` that already has every line); refuses,
    writing nothing, if any other exists or a file stands where one of their folders would be."""
    files = project_files(folder)
    _refuse_what_is_in_the_way(folder, files)
    # Every existing file is read before the first write, so a refusal writes nothing.
    planned = [_planned(folder / item.path, item) for item in files]
    written: list[Path] = []
    for target, text, verb, mode in planned:
        if text is None:
            continue
        try:
            # Durable: a file of init lost to a power cut comes back empty, and an init run
            # again refuses to write over it.
            write_atomically(target, text, durable=True, mode=mode)
        except OSError as exc:  # a read-only folder, a full disk
            message = os_error_message(exc, target, f"write {target}")
            raise ScaffoldError(f"{message}; {_undone(written)}") from None
        if verb == "wrote":
            written.append(target)
    return [(target, verb) for target, _, verb, _ in planned]


def _undone(written: list[Path]) -> str:
    """Removes the files this init wrote before one failed, so that init can run again once
    the cause is fixed (it writes nothing over existing files); says what it did. An existing
    .gitignore it extended keeps the lines added: the next init finds them there."""
    if not written:
        return "init wrote no file"
    kept = []
    for target in written:
        try:
            target.unlink()
        except OSError:
            kept.append(str(target))
    if kept:
        return f"init could not remove {', '.join(kept)}: remove them and run it again"
    return "the files init wrote before it are removed again, so it can run again"


def _planned(target: Path, item: ProjectFile) -> tuple[Path, str | None, str, int]:
    """The text to write at `target` (None: nothing to write), the verb for it and the mode."""
    if not (item.extends and _is_regular_file(target)):
        return target, item.text, "wrote", 0o644  # a file of the project, not the account's
    try:
        existing = target.read_text(encoding="utf-8")
        mode = target.stat().st_mode & 0o777
    except (OSError, UnicodeDecodeError) as exc:
        raise ScaffoldError(
            f"{target} cannot be read to add surveyctl's lines to it ({exc}); init wrote nothing"
        ) from None
    # `.surveyctl`, `/.surveyctl/` and `.surveyctl/` ignore the same folder at the root.
    have = {line.strip().strip("/") for line in existing.splitlines()}
    if all(
        line.startswith("#") or not line.strip() or line.strip().strip("/") in have
        for line in item.text.splitlines()
    ):
        return target, None, "kept", mode
    separator = "\n" if existing.endswith("\n") else "\n\n"
    return target, f"{existing}{separator}{item.text}" if existing else item.text, "extended", mode


def _is_regular_file(path: Path) -> bool:
    # Not through a link: extending it would change a file outside the project.
    return path.is_file() and not path.is_symlink()


def _refuse_what_is_in_the_way(folder: Path, files: list[ProjectFile]) -> None:
    """ScaffoldError, before anything is written, when a file of the project exists (a
    symbolic link too, even one whose target is missing: writing would replace the link) or
    a file stands where one of their folders would be made."""
    existing = [
        f.path
        for f in files
        if os.path.lexists(folder / f.path)
        and not (f.extends and _is_regular_file(folder / f.path))
    ]
    if existing:
        raise ScaffoldError(
            f"{folder / existing[0]} already exists; init writes nothing over existing files "
            f"(would overwrite: {', '.join(existing)})"
        )
    for item in files:
        blocker = file_in_the_way(folder / item.path)
        if blocker is not None:
            raise ScaffoldError(
                f"{blocker} is a file where a folder is expected (for {item.path}); init "
                "wrote nothing"
            )
