"""The `surveyctl` root command: global options, lazy sub-commands, and error reporting.

Sub-commands are imported only when used, so `surveyctl --help` and a plain `validate` stay
fast: the root's help lists them from SUMMARIES, without importing any. A `SurveyctlError`
becomes one line on stderr and exit code 1; `--debug` also shows the traceback and the HTTP
exchange. Ctrl-C, SIGTERM or SIGHUP that no command handles itself is one line and the
shell's exit code for the signal (130, 143, 129; see surveyctl.signals). A file that the file
system refuses where no command expected it (a disk that filled up) is one line naming it, and
exit code 1. Any other exception is a bug: its traceback is shown and the exit code is 1. The
API key is redacted from all of it (the access-token header is never logged).
"""

from __future__ import annotations

import errno
import importlib
import os
import re
import sys
from pathlib import Path
from typing import Any

import click

from surveyctl import __version__
from surveyctl.cli.options import FilePath, Number
from surveyctl.errors import SurveyctlError

# command name -> "module:attribute"; each command group lives in its own module.
COMMANDS: dict[str, str] = {
    "transactions": "surveyctl.cli.transactions:transactions",
    "text-check": "surveyctl.cli.textcheck:text_check",
    "adjust": "surveyctl.cli.adjust:adjust",
    "adjustments": "surveyctl.cli.adjustments:adjustments",
    "link": "surveyctl.cli.link:link",
    "attributes": "surveyctl.cli.attributes:attributes",
    "sandbox": "surveyctl.cli.sandbox:sandbox",
    "state": "surveyctl.cli.state:state",
    "force-unlock": "surveyctl.cli.state:force_unlock_command",
    "validate": "surveyctl.cli.validate:validate_command",
    "render": "surveyctl.cli.validate:render_command",
    "plan": "surveyctl.cli.plan:plan_command",
    "status": "surveyctl.cli.status:status_command",
    "apply": "surveyctl.cli.apply:apply_command",
    "import": "surveyctl.cli.imports:import_command",
    "import-group": "surveyctl.cli.imports:import_group_command",
    "surveys": "surveyctl.cli.surveys:surveys",
    "init": "surveyctl.cli.init:init_command",
    "show": "surveyctl.cli.show:show_command",
    "fmt": "surveyctl.cli.fmt:fmt_command",
    "conformance": "surveyctl.cli.conformance:conformance_command",
}

# command name -> its one-line help, as the command's docstring says it (a test keeps the two
# equal): `surveyctl --help` lists the commands from here instead of importing them all.
SUMMARIES: dict[str, str] = {
    "adjust": "Submit the transactions listed in FILE (CSV or JSON) for adjustment.",
    "adjustments": "List the adjustments submitted from this project and how each one ended.",
    "apply": "Apply the manifests (or a plan saved by `plan --out FILE`) to the environment.",
    "attributes": "The qualifications a survey of LOCALE can target, with their answer codes.",
    "conformance": "Check surveyctl's assumptions about the API on the environment's account, "
    "with one draft survey that is never launched and is deleted at the end.",
    "fmt": "Rewrite manifests (files or folders) in the canonical layout, keeping comments.",
    "force-unlock": "Remove the environment's state lock left by a command that did not finish.",
    "import": "Adopt live survey SURVEY_ID: write its manifest and record it in state.",
    "import-group": "Adopt live exclusion group REF (its surveys must be managed already).",
    "init": "Write surveyctl.yaml, a .gitignore for .surveyctl/, an example manifest and the CI "
    "workflows into FOLDER (default: the current one).",
    "link": "Build and verify the respondent return link (ps_hash).",
    "plan": "Show what apply would change in the live surveys; writes nothing.",
    "render": "Print each survey as the API body its manifest makes, as JSON.",
    "sandbox": "The local marketplace: the Buyer API served from a SQLite file.",
    "show": "Show a plan saved by `surveyctl plan --out PLANFILE`; reads nothing else.",
    "state": "Show and repair the state of the environment, in a file or PostgreSQL (only "
    "`rebuild` reads the marketplace).",
    "status": "Show the fieldwork of SURVEY_ID (of every managed survey without it), or move "
    "SURVEY_ID to NEW_STATUS (live, paused or closed).",
    "surveys": "The account's surveys in the marketplace.",
    "text-check": "Check the free-text answers of TRANSACTION_ID: one row of flags per answer.",
    "transactions": "Read a survey's transactions (respondent sessions).",
    "validate": "Check manifests (files or folders) before anything is sent; exit 1 when invalid.",
}


class UserError(click.ClickException):
    """A SurveyctlError on its way out: click prints `Error: <message>` and exits 1."""


# Global options, also accepted after the sub-command (`surveyctl plan --env staging`).
GLOBAL_OPTIONS_WITH_VALUE = ("--env", "--config", "--timeout")
# The longest --timeout: a day. Far larger ones overflow a socket's deadline (time_t).
MAX_TIMEOUT = 86400
GLOBAL_FLAGS = ("--debug", "--no-color")
# The exit code of a command whose output pipe was closed (128 + SIGPIPE), as a shell reports
# one that SIGPIPE ended.
BROKEN_PIPE_EXIT = 141

# With this option on the line, exit code 2 means "the plan has changes" (as in Terraform), so
# usage errors exit 1 instead of click's 2.
DETAILED_EXITCODE = "--detailed-exitcode"
ARGUMENTS = "surveyctl.arguments"  # the command line, for the hints of a usage error
_UNKNOWN_COMMAND = re.compile(r"No such command '(.+)'\.")
_NEGATIVE_NUMBER = re.compile(r"-[0-9]+")


def hoist_global_options(args: list[str]) -> list[str]:
    """`args` with the global options written after the sub-command moved in front of it,
    where click looks for them; everything after `--` is left alone."""
    index = 0
    while index < len(args) and args[index].startswith("-") and args[index] != "--":
        index += 2 if args[index] in GLOBAL_OPTIONS_WITH_VALUE else 1
    if index >= len(args) or args[index] == "--":
        return args
    moved: list[str] = []
    kept: list[str] = []
    rest = args[index + 1 :]
    position = 0
    while position < len(rest):
        arg = rest[position]
        if arg == "--":
            kept.extend(rest[position:])
            break
        if arg in GLOBAL_FLAGS or arg.startswith(tuple(f"{o}=" for o in GLOBAL_OPTIONS_WITH_VALUE)):
            moved.append(arg)
        elif arg in GLOBAL_OPTIONS_WITH_VALUE and position + 1 < len(rest):
            moved.extend(rest[position : position + 2])
            position += 1
        elif arg in GLOBAL_OPTIONS_WITH_VALUE:
            # Last on the line, without its value: the sub-command would call it unknown.
            raise click.BadOptionUsage(arg, f"Option '{arg}' requires an argument.")
        else:
            kept.append(arg)
        position += 1
    return [*args[:index], *moved, args[index], *kept]


class LazyGroup(click.Group):
    """A group whose sub-commands are imported on first use, that takes the global options
    anywhere on the line, and that reports user errors."""

    def main(self, *args: Any, **kwargs: Any) -> Any:
        """The command with stdout and stderr redacted throughout, its usage errors, help and
        error messages included (surveyctl.cli.streams.redacting)."""
        from surveyctl.cli.streams import redacting

        with redacting():
            return super().main(*args, **kwargs)

    def parse_args(self, ctx: click.Context, args: list[str]) -> list[str]:
        ending = args.index("--") if "--" in args else len(args)
        # `--detailed-exitcode=1` too: a usage error of its own, which must not exit 2.
        ctx.meta[DETAILED_EXITCODE] = any(
            arg == DETAILED_EXITCODE or arg.startswith(DETAILED_EXITCODE + "=")
            for arg in args[:ending]
        )
        ctx.meta[ARGUMENTS] = list(args[:ending])
        try:
            return super().parse_args(ctx, hoist_global_options(list(args)))
        except click.UsageError as exc:
            raise _usage_error(ctx, exc) from None
        except BrokenPipeError:
            # `surveyctl --help | head -1`: the root's help and version are printed here,
            # before invoke, whose handler of a reader gone ends every command with 141.
            raise click.exceptions.Exit(BROKEN_PIPE_EXIT) from None

    def list_commands(self, ctx: click.Context) -> list[str]:
        return sorted(COMMANDS)

    def get_command(self, ctx: click.Context, name: str) -> click.Command | None:
        target = COMMANDS.get(name)
        if target is None:
            return None
        module_name, attribute = target.split(":")
        return getattr(importlib.import_module(module_name), attribute)

    def format_commands(self, ctx: click.Context, formatter: click.HelpFormatter) -> None:
        """The commands and the first sentence of their help, from SUMMARIES, whole and
        wrapped (as WholeSummaries lists a group's commands) rather than cut to one line."""
        rows = [(name, SUMMARIES[name]) for name in self.list_commands(ctx)]
        with formatter.section("Commands"):
            formatter.write_dl(rows)

    def invoke(self, ctx: click.Context):
        from surveyctl.cli.context import CliContext

        try:
            return super().invoke(ctx)
        except click.UsageError as exc:
            raise _usage_error(ctx, exc) from None
        except (click.ClickException, click.exceptions.Exit, click.Abort):
            raise
        except BrokenPipeError:
            # The reader of the output went away (`surveyctl plan | head`): end as a command
            # that SIGPIPE ended does, quietly, with 141. What a state write recorded stays
            # recorded; the exit code says that the output was cut short.
            raise click.exceptions.Exit(BROKEN_PIPE_EXIT) from None
        except KeyboardInterrupt as exc:
            # click would say "Aborted!" and exit 1, as for a refused question: an interrupted
            # command exits as a shell reports one (130 for Ctrl-C), and says so. Each state
            # write is atomic (surveyctl.state), so what it recorded before the signal stays.
            from surveyctl import signals

            how = signals.describe(exc)
            error = UserError(
                f"interrupted ({how}); the command stopped before it finished"
                if how == "Ctrl-C"
                else f"stopped by {how}; the command stopped before it finished"
            )
            error.exit_code = signals.exit_code(exc)
            raise error from None
        except SurveyctlError as exc:
            if isinstance(ctx.obj, CliContext) and ctx.obj.debug:
                click.echo(_redacted(_traceback()), err=True, nl=False)
            told = str(exc)
            if isinstance(ctx.obj, CliContext):
                told = str(_key_variable_named(ctx.obj, exc)) + _sandbox_hint(ctx.obj, exc)
                # A command the message suggests runs where this one ran, once pasted.
                told = ctx.obj.command_prefix().carry(told)
            error = UserError(_shown(_redacted(told)))
            # The signal's code for a command stopped by one (surveyctl.safety.Interrupted: 130,
            # 143, 129), else 1.
            error.exit_code = getattr(exc, "exit_code", 1)
            raise error from exc
        except OSError as exc:
            message = _file_system_refusal(exc)
            if message is None:
                raise _bug() from exc
            if isinstance(ctx.obj, CliContext) and ctx.obj.debug:
                click.echo(_redacted(_traceback()), err=True, nl=False)
            raise UserError(_shown(_redacted(message))) from exc
        except Exception as exc:
            if isinstance(exc, UnicodeEncodeError) and _escaped_bytes(exc):
                # Bytes of an argument or variable that are not UTF-8 (the shell's $'\\xff')
                # reach Python as escapes that no request, URL or file of text can carry.
                raw = exc.object.encode("utf-8", "surrogateescape")[:80]
                raise UserError(
                    _shown(
                        _redacted(
                            f"{raw!r} holds bytes that are not UTF-8 text (given on the "
                            "command line or in an environment variable): give it as UTF-8"
                        )
                    )
                ) from None
            raise _bug() from exc


def _key_variable_named(context: Any, exc: SurveyctlError) -> SurveyctlError:
    """A refused key (401), said by any command, as one sentence naming the variable the
    key came from: a read that stopped there (status, transactions, surveys list) said only
    that the service answered 401, and plan and apply said "the environment's api_key_env"
    without saying which variable that is. A transaction read's 403, which may be the key or
    another buyer's survey, names the variable the same way."""
    from surveyctl.api.transactions import ReadForbidden
    from surveyctl.errors import ApiError, KeyRefused

    if isinstance(exc, KeyRefused):
        refusal = exc.refusal
    elif isinstance(exc, ApiError) and exc.status == 401 or isinstance(exc, ReadForbidden):
        refusal = exc
    else:
        return exc
    try:
        environment = context.environment()
    except SurveyctlError:
        return exc
    if environment.embedded or not environment.api_key_env:
        return exc
    if isinstance(exc, ReadForbidden):  # a 403 that may be the key or the survey: both said
        return exc.naming(environment.name, environment.api_key_env)
    return KeyRefused(refusal, environment.name, environment.api_key_env)


def _sandbox_hint(context: Any, exc: SurveyctlError) -> str:
    """What to start when a host on loopback refuses the connection: there, nothing listening
    is most often a `surveyctl sandbox serve` not started (or stopped), which the retries'
    "connection refused" alone does not say."""
    from surveyctl.errors import ConnectionFailed

    if not isinstance(exc, ConnectionFailed) or "connection refused" not in exc.message:
        return ""
    try:
        environment = context.environment()
    except SurveyctlError:
        return ""
    from surveyctl.safety import is_sandbox

    if environment.embedded or not is_sandbox(environment):
        return ""
    from urllib.parse import urlsplit

    url = urlsplit(environment.host or "")
    port = url.port or (443 if url.scheme == "https" else 80)
    return (
        f"; nothing listens at {url.hostname}:{port}: start the sandbox there with "
        f"`surveyctl sandbox serve --port {port}` (in another terminal), or correct the host "
        f"of environment {environment.name!r}"
    )


def _bug() -> UserError:
    """The error being handled, a bug in surveyctl: its traceback is what a report needs, but
    never with the key."""
    exc = sys.exc_info()[1]
    click.echo(_redacted(_traceback()), err=True, nl=False)
    return UserError(
        f"unexpected {type(exc).__name__} (a bug in surveyctl; the traceback above shows where)"
    )


# A write the file system refuses for want of room (a full disk, a quota, a limit on a file's
# size): no bug, also where the error names no file.
_FULL = (errno.ENOSPC, errno.EFBIG, errno.EDQUOT)


def _file_system_refusal(exc: OSError) -> str | None:
    """One sentence for a file that could not be read or written where no command expected it
    to fail (a disk that filled up); None for an OSError that is not about a file."""
    from surveyctl.files import os_error_message

    if exc.filename is not None:
        path = Path(os.fsdecode(exc.filename))
        return os_error_message(exc, path, f"write {path}" if exc.errno in _FULL else "go on")
    if exc.errno in _FULL:
        reason = (exc.strerror or os.strerror(exc.errno)).lower()
        return f"cannot go on: a file could not be written ({reason}); free some space"
    return None


def _escaped_bytes(exc: UnicodeEncodeError) -> bool:
    """Whether what could not be encoded is bytes that were not UTF-8 when Python decoded them
    (an escape of U+DC80-U+DCFF each), not half a character of some text."""
    failed = exc.object[exc.start : exc.end] if isinstance(exc.object, str) else ""
    return bool(failed) and all("\udc80" <= c <= "\udcff" for c in failed)


def _traceback() -> str:
    """The traceback of the exception being handled (traceback loads only when one is shown)."""
    import traceback

    return traceback.format_exc()


def _usage_error(ctx: click.Context, exc: click.UsageError) -> click.UsageError:
    """`exc` with a "did you mean" for a misspelt command or a Terraform-style `-out=x`, and
    exiting 1 when `--detailed-exitcode` is on the command line: there 2 means "changes" and
    nothing else, so a mistyped option must not pass for a plan with changes."""
    if ctx.meta.get(DETAILED_EXITCODE):
        exc.exit_code = 1
    exc.message = _shown(exc.message)  # it quotes the argument as typed
    unknown = _UNKNOWN_COMMAND.fullmatch(exc.message)
    command = exc.ctx.command if exc.ctx is not None else None
    if unknown and isinstance(command, click.Group):
        names = command.list_commands(exc.ctx)
        import difflib  # only for a mistyped command: its import costs every start 10 ms

        # `surveyctl simulate` or `surveyctl list`: a command of a group typed without its
        # group. The closest top-level name would send one elsewhere ('list' read as
        # 'validate'), so the group's command, or each group's, is named instead.
        close = _in_groups(exc.ctx, command, unknown.group(1)) or difflib.get_close_matches(
            unknown.group(1), names, n=1, cutoff=0.5
        )
        if close:
            exc.message = f"No such command {unknown.group(1)!r} (did you mean {_either(close)}?)."
            # click (8.4+) adds its own "Did you mean" for a group that lists its commands
            # (state, transactions...): the suggestion would be said twice.
            exc.possibilities = None
    if isinstance(exc, click.NoSuchOption) and command is not None:
        _single_dash_hint(exc, command, ctx.meta.get(ARGUMENTS, []))
        _json_hint(exc, command, ctx.meta.get(ARGUMENTS, []))
    if isinstance(exc, click.NoSuchOption) and _NEGATIVE_NUMBER.fullmatch(exc.option_name):
        # `surveyctl status -5`: read as an option (click names `-1` of `-12`), and "no such
        # option" alone leaves one wondering.
        typed = [
            arg
            for arg in ctx.meta.get(ARGUMENTS, [])
            if _NEGATIVE_NUMBER.fullmatch(arg) and arg.startswith(exc.option_name)
        ]
        shown = typed[0] if typed else exc.option_name
        exc.message = f"No such option {shown!r}: an id is a positive number."
        exc.possibilities = []
    return exc


def _in_groups(ctx: click.Context, group: click.Group, word: str) -> list[str]:
    """`GROUP WORD` for each sub-group of `group` that has a command named `word`."""
    found = []
    for name in group.list_commands(ctx):
        sub = group.get_command(ctx, name)
        if isinstance(sub, click.Group) and word in sub.list_commands(ctx):
            found.append(f"{name} {word}")
    return found


def _either(names: list[str]) -> str:
    """'a', 'a' or 'b', 'a', 'b' or 'c'."""
    quoted = [repr(name) for name in names]
    return " or ".join([", ".join(quoted[:-1]), quoted[-1]] if len(quoted) > 1 else quoted)


def _single_dash_hint(exc: click.NoSuchOption, command: click.Command, args: list[str]) -> None:
    """`-out=x` is read by click as the short option `-o`: name the long option it meant."""
    longs = [o for p in command.params for o in getattr(p, "opts", []) if o.startswith("--")]
    for arg in args:
        if arg.startswith(exc.option_name) and not arg.startswith("--") and len(arg) > 2:
            meant = "-" + arg.split("=", 1)[0]
            import difflib

            close = difflib.get_close_matches(meant, longs, n=1, cutoff=0.6)
            if close:
                exc.option_name = arg
                exc.message = f"No such option {arg!r}."
                exc.possibilities = [close[0] + arg[len(meant) - 1 :]]
            return


def _json_hint(exc: click.NoSuchOption, command: click.Command, args: list[str]) -> None:
    """`--json` (or Terraform's `-json`, which click reads as `-j`) on a command that prints
    JSON with `--format json`: name that option, which no spelling of --json is close to."""
    formats = [p for p in command.params if "--format" in getattr(p, "opts", ())]
    if not formats or "json" not in getattr(formats[0].type, "choices", ()):
        return
    for arg in args:
        typed = arg.split("=", 1)[0]
        if typed in ("--json", "-json") and typed.startswith(exc.option_name):
            exc.option_name = arg
            exc.message = f"No such option {arg!r}."
            exc.possibilities = ["--format json"]
            return


def _shown(text: str) -> str:
    """An error message as a terminal shows it: it quotes arguments, file names and the
    service's words, whose escape codes would otherwise act on the terminal."""
    from surveyctl.render.values import printable_lines

    return printable_lines(text)


def _redacted(text: str) -> str:
    """`text` without the API key of any client made so far (imported late: `--help` needs
    none of it)."""
    from surveyctl.api.secrets import redact

    return redact(text)


def _named_environment(ctx: click.Context, param: click.Parameter, value: str | None):
    """--env as given; an empty one is refused: it would fall through to $SURVEYCTL_ENV or the
    default environment, so `--env "$TARGET"` with TARGET unset would act on another one."""
    if value is not None and not value.strip():
        raise click.BadParameter("an empty name is no environment: name one, or leave --env out")
    return value


@click.group(cls=LazyGroup, context_settings={"help_option_names": ["-h", "--help"]})
@click.version_option(__version__, prog_name="surveyctl")
@click.option(
    "--env",
    "env_name",
    metavar="NAME",
    callback=_named_environment,
    help="Environment to use (or $SURVEYCTL_ENV).",
)
@click.option(
    "--config",
    "config_path",
    type=FilePath(dir_okay=False, path_type=Path),
    help="Configuration file (default: surveyctl.yaml of the current folder or of a parent "
    "up to the repository root).",
)
@click.option(
    "--timeout",
    type=Number(min=0, min_open=True, max=MAX_TIMEOUT),
    envvar="SURVEYCTL_TIMEOUT",
    metavar="SECONDS",
    help="Wait at most this long on a service that does not answer: for each attempt, and "
    "for the failed attempts and retry pauses of the whole command together "
    "(or $SURVEYCTL_TIMEOUT; default 30, at most 86400). Each retry is said on stderr.",
)
@click.option("--debug", is_flag=True, help="Show tracebacks and the HTTP exchange.")
@click.option("--no-color", is_flag=True, help="No colour in the output (also: $NO_COLOR).")
@click.pass_context
def cli(
    ctx: click.Context,
    env_name: str | None,
    config_path: Path | None,
    timeout: float | None,
    debug: bool,
    no_color: bool,
) -> None:
    """Survey-as-code for buyers on a respondent marketplace.

    Without configuration every command targets the embedded sandbox, a local marketplace
    whose data lives in .surveyctl/sandbox.db of the project. The options below are also
    accepted after the command: `surveyctl plan --env staging`.
    """
    from surveyctl.cli.context import CliContext  # here, so `--version` and `--help` skip it

    ctx.obj = CliContext(
        env_name=env_name,
        config_path=config_path,
        debug=debug,
        no_color=no_color,
        timeout=timeout,
    )
    if debug:
        import logging  # here: logging and what it loads cost --help 20 ms

        from surveyctl.api.secrets import redacting_handler

        logging.basicConfig(
            level=logging.DEBUG,
            handlers=[redacting_handler(sys.stderr, "%(name)s %(message)s")],
            force=True,
        )
        # urllib3 logs no headers, so the access token stays out of the debug output.
        logging.getLogger("urllib3").setLevel(logging.INFO)


def main() -> None:
    """Entry point of the console script and of `python -m surveyctl`."""
    from surveyctl.cli import streams
    from surveyctl.signals import stop_like_ctrl_c

    if not streams.settle():
        sys.stderr.write(streams.CLOSED_STDOUT)
        sys.exit(1)
    stop_like_ctrl_c()
    cli(prog_name="surveyctl")
