"""Where an environment's state is, and what a plan must not do when it is not there.

- An environment whose configured backend holds no state while the other backend does (its
  file `.surveyctl/state/<env>.json` exists while PostgreSQL is configured, or the file
  backend is configured while the PostgreSQL of `$SURVEYCTL_STATE_DSN` holds its state in
  schema `surveyctl`, the default of `state migrate --from postgres`, or in the schema `init`
  names after the project's folder): plan and apply refuse, naming both places and the
  `state migrate` that copies it. A file `state migrate` copied elsewhere is no such state:
  the copy it was made into is newer. Only an empty state is looked for elsewhere, so a plan
  against a state that holds something opens no connection for it.
- A state file that `state migrate` copied elsewhere (its mark, `<env>.moved.json`, is there
  for this lineage): plan and apply refuse, naming where it went and the migrate that copies
  it back; a plan that went on would write to a copy the team no longer reads, and the two
  copies would part (one `stat` per plan).
- An empty state on an environment that is not the embedded sandbox, with creates in the
  plan: a warning naming where the state is kept; and under `CI=true`, with the file backend
  on a protected environment, apply refuses unless `--allow-local-state` (a CI checkout always
  starts without `.surveyctl/`).
"""

from __future__ import annotations

from surveyctl.config import Config, Environment
from surveyctl.errors import SurveyctlError
from surveyctl.render.values import printable
from surveyctl.scaffold import state_schema
from surveyctl.state.backend import StateBackend
from surveyctl.state.records import State, StateError, state_file
from surveyctl.variables import (
    DEFAULT_DSN_VARIABLE,
    libpq_defaults,
    running_in_ci,
)

# Where `state migrate --from postgres` looks by default: the same place is looked at here.
DEFAULT_SCHEMA = "surveyctl"
ALLOW_LOCAL_STATE = "--allow-local-state"


class MisplacedState(SurveyctlError):
    """The configured backend is empty while the other one holds the environment's state."""


def is_empty(state: State) -> bool:
    return not state.resources and not state.journal


def check_placement(config: Config, environment: Environment, state: State) -> None:
    """MisplacedState when `state` (of the configured backend) is empty and the other backend
    holds this environment's state, or when it is a state file that was copied elsewhere."""
    name = environment.name
    if environment.state.backend == "file":
        _check_not_moved(state_file(config.state_dir, name), name, state)
    if not is_empty(state):
        return
    if environment.state.backend == "postgres":
        path = state_file(config.state_dir, name)
        held = _file_holds(path, name)
        if held:
            raise MisplacedState(
                f"environment {name!r} keeps its state in PostgreSQL (${environment.state.dsn_env}"
                f", schema {environment.state.schema}), which holds nothing for it, while {path} "
                f"holds its state ({held}); copy it with `surveyctl state migrate --from file "
                f"--env {name}` first (or remove that file if it is not needed)"
            )
        return
    # The schemas a team's state is likeliest in: the default one, and the one `init` names
    # after the project's folder (a repository's name, the same in every checkout).
    schemas = list(dict.fromkeys((DEFAULT_SCHEMA, state_schema(config.root))))
    value = config.variable(DEFAULT_DSN_VARIABLE)
    schema, held = _postgres_holds(name, schemas, DEFAULT_DSN_VARIABLE, value)
    if held:
        named = "" if schema == DEFAULT_SCHEMA else f", schema: {schema}"
        option = "" if schema == DEFAULT_SCHEMA else f" --schema {schema}"
        raise MisplacedState(
            f"environment {name!r} keeps its state in {state_file(config.state_dir, name)}, "
            f"which holds nothing, while PostgreSQL (${DEFAULT_DSN_VARIABLE}, schema "
            f"{schema}) holds its state ({held}); set `state: {{backend: postgres, "
            f"dsn_env: {DEFAULT_DSN_VARIABLE}{named}}}` for it in surveyctl.yaml, or copy it "
            f"here with `surveyctl state migrate --from postgres{option} --env {name}`"
        )


def load_placed(
    config: Config, environment: Environment, store: StateBackend, verify: bool = True
) -> State:
    """The state of `store`, read afresh, once `check_placement` finds it where the team keeps
    it: what every command that writes the state reads first (import, rebuild, refresh, mv,
    rm), so none records into a copy nobody reads again or starts a second state beside the
    first."""
    state = store.load(verify=verify)
    check_placement(config, environment, state)
    return state


def _check_not_moved(path, environment: str, state: State) -> None:
    # Imported here: the file backend imports this package's records, not the reverse.
    from surveyctl.state.file.moved import moved_file, read_moved

    moved = read_moved(path)
    # A mark of another lineage belongs to a state since replaced by hand: not this one.
    if moved is None or moved.lineage != state.lineage:
        return
    # Who migrated is $SURVEYCTL_ACTOR as it was: a line break in it would start a line of
    # its own in this message (which keeps its line breaks).
    who = printable(moved.who)
    raise MisplacedState(
        f"the state of environment {environment!r} in {path} was copied to {moved.moved_to} "
        f"by `surveyctl state migrate` ({who}, {moved.at}, serial {moved.serial}) and "
        f"this copy no longer follows it: point `state:` in surveyctl.yaml at that backend, "
        f"copy the state back here with `{moved.copy_back}`, or remove {moved_file(path)} if "
        "this copy is the one to keep"
    )


def state_warnings(
    config: Config, environment: Environment, location: str, state: State, creates: int
) -> list[str]:
    """The warnings of a plan against an empty state: the plan creates resources (`creates`)
    from no record, and the state may be in the default schema of the same database."""
    if environment.embedded or not is_empty(state):
        return []
    warnings = []
    if creates:
        warnings.append(
            f"the state of environment {environment.name!r} ({location}) is empty, so the plan "
            f"creates {creates} resource(s); if these manifests were applied before, their "
            "state is kept elsewhere: `surveyctl state rebuild` records what exists on the "
            "service"
        )
    return warnings + _default_schema_holds(config, environment)


def _default_schema_holds(config: Config, environment: Environment) -> list[str]:
    """The warning when the PostgreSQL state is kept in a schema of its own, holds nothing, and
    the same database's default schema holds this environment: most likely the state of a
    project made before `init` named a schema, whose `schema:` was set without copying the
    state. Said whether the plan creates or withholds its creates as existing already; only
    said, not refused: another project may keep an environment of the same name there."""
    settings = environment.state
    if settings.backend != "postgres" or settings.schema == DEFAULT_SCHEMA:
        return []
    value = config.variable(settings.dsn_env)
    _, held = _postgres_holds(environment.name, [DEFAULT_SCHEMA], settings.dsn_env, value)
    if not held:
        return []
    return [
        f"the state of environment {environment.name!r} in schema {settings.schema} is empty, "
        f"while schema {DEFAULT_SCHEMA} of the same database holds one ({held}); if it is "
        f"this project's, copy it with `surveyctl state migrate --from postgres --dsn-env "
        f"{settings.dsn_env} --schema {DEFAULT_SCHEMA} --env {environment.name}`"
    ]


def local_state_refusal(
    environment: Environment, location: str, state: State, creates: int, allowed: bool
) -> str:
    """Why apply refuses to create from an empty local state in CI ('' when it does not)."""
    if allowed or not environment.protected or environment.state.backend != "file":
        return ""
    if not running_in_ci():
        return ""
    if not creates or not is_empty(state):
        return ""
    return (
        f"CI=true and the state of protected environment {environment.name!r} is a local file "
        f"({location}) that holds nothing, as in every fresh checkout, so this apply would "
        f"create {creates} resource(s) from no record of what exists; keep the state in "
        "PostgreSQL (`state: {backend: postgres, dsn_env: SURVEYCTL_STATE_DSN}`), or pass "
        f"{ALLOW_LOCAL_STATE} if the state really starts here"
    )


def _file_holds(path, environment: str) -> str:
    """'serial N, M resource(s)' when the state file at `path` holds a state, else ''; also ''
    for a file `state migrate` copied elsewhere: its copy no longer follows the state, so a
    migrate from it could bring back an older state than the one it was copied to."""
    if not path.is_file():
        return ""
    # Imported here: the file backend imports this package's records, not the reverse.
    from surveyctl.state.file import FileStateStore
    from surveyctl.state.file.moved import read_moved

    store = FileStateStore(path, environment)
    try:
        state = store.load(verify=False)
        moved = read_moved(path)
    except StateError:
        return "a file that cannot be read"
    finally:
        store.close()
    if moved is not None and moved.lineage == state.lineage:
        return ""
    return _held(state)


def _postgres_holds(
    environment: str, schemas: list[str], variable: str, value: str | None
) -> tuple[str, str]:
    """(schema, 'serial N, M resource(s)') for the first of `schemas` in which the PostgreSQL
    of `value` (the connection string in `variable`) holds this environment's state, else
    ('', '') (also when it cannot be reached: a variable set for something else must not stop
    a plan). Read-only: no table is created."""
    if not value:
        return "", ""
    # Imported here: psycopg is loaded only where a PostgreSQL state may be.
    import psycopg
    from psycopg import sql

    from surveyctl.state.postgres.database import DatabaseError, Dsn

    try:
        dsn = Dsn.parse(value, environment, variable, libpq_defaults())
        with dsn.connect(f"state placement {environment}") as connection:
            # Only the schemas that hold surveyctl's tables: a missing one is no error.
            present = connection.execute(
                "SELECT n FROM unnest(%s::text[]) WITH ORDINALITY AS u(n, i) "
                "WHERE to_regclass(quote_ident(n) || '.states') IS NOT NULL "
                "AND to_regclass(quote_ident(n) || '.resources') IS NOT NULL ORDER BY i",
                (schemas,),
            ).fetchall()
            for (schema,) in present:
                row = connection.execute(
                    sql.SQL(
                        "SELECT s.serial, (SELECT count(*) FROM {s}.resources r "
                        "WHERE r.environment = s.environment) FROM {s}.states s "
                        "WHERE s.environment = %s"
                    ).format(s=sql.Identifier(schema)),
                    (environment,),
                ).fetchone()
                if row is not None and (row[0] != 0 or row[1] != 0):
                    return schema, f"serial {row[0]}, {row[1]} resource(s)"
    except (DatabaseError, psycopg.Error):
        return "", ""
    return "", ""


def _held(state: State) -> str:
    if is_empty(state):
        return ""
    return f"serial {state.serial}, {len(state.resources)} resource(s)"
