"""Option types that several commands share."""

from __future__ import annotations

import math
from collections.abc import Callable, Sequence

import click
from click.core import ParameterSource

# Said of a list option given empty (`--status ""`, `--supplier ,`): it would filter nothing,
# so a script whose variable is unset would read (and export, and adjust) every record.
NAME_AT_LEAST_ONE = "name at least one, or leave the option out"


class WholeSummaries(click.Group):
    """A group whose help lists each command with the whole first sentence of its help,
    wrapped to the terminal: click cuts it to one line ("Submit the transactions listed in
    FILE (CSV or JSON) for..."), which at 80 columns cut most of surveyctl's mid-phrase."""

    def format_commands(self, ctx: click.Context, formatter: click.HelpFormatter) -> None:
        rows = []
        for name in self.list_commands(ctx):
            command = self.get_command(ctx, name)
            if command is not None and not command.hidden:
                rows.append((name, command.get_short_help_str(limit=WHOLE)))
        if rows:
            with formatter.section("Commands"):
                formatter.write_dl(rows)


# A limit no first sentence reaches: click's short help is then that sentence, whole.
WHOLE = 10_000


def int_list(ctx: click.Context, param: click.Parameter, value: str | None) -> tuple[int, ...]:
    """A click callback reading `12,13` as (12, 13); empty when the option is not given, and
    refused when it is given empty."""
    if value is None:
        return ()
    try:
        numbers = tuple(int(part) for part in value.split(",") if part.strip())
    except ValueError:
        raise click.BadParameter(f"{value!r} is not a comma-separated list of integers") from None
    if not numbers:
        raise click.BadParameter(NAME_AT_LEAST_ONE)
    return numbers


def status_code(value: str) -> int | None:
    """A transaction status by name (`complete`, as set-status names them) or code (`21`),
    None when it is neither."""
    from surveyctl.statuses import RETURN_STATUSES  # here: the root's --help loads no statuses

    text = value.strip().lower()
    if text in RETURN_STATUSES:
        return RETURN_STATUSES[text]
    # isdigit() alone takes "²", which int() refuses
    return int(text) if text.isascii() and text.isdigit() else None


def quota_id_list(value: str) -> list[str] | None:
    """The buyer_quota_ids of `male,female` (none for ''); None when an item is empty, which
    the commands refuse: a complete would count in fewer quotas than were meant."""
    ids = [part.strip() for part in value.split(",")]
    if value and not all(ids):
        return None
    return [i for i in ids if i]


# The format for people is `text` on some commands and `table` on others: each takes both.
HUMAN_FORMATS = ("text", "table")
# What each output format is for, in the help of every --format.
FORMAT_USES = {
    "text": "for people",
    "table": "for people",
    "markdown": "for a pull-request comment",
    "json": "for programs",
    "jsonl": "one JSON record a line",
    "csv": "for spreadsheets",
    "tsv": "tab-separated, exact columns",
}


def format_help(choices: Sequence[str]) -> str:
    """The help of a --format offering `choices`: what each one is for."""
    return "; ".join(f"{choice}: {FORMAT_USES[choice]}" for choice in choices) + "."


# The formats a plan is shown in (plan, show) and an apply reported in, as their --help lists
# them without loading the renderers; tests/test_startup.py keeps them equal to the registry's.
PLAN_FORMAT_NAMES = ("text", "json", "markdown")
APPLY_FORMAT_NAMES = ("text", "json")
# The help of plan's and show's --format (apply's says what its json report holds).
PLAN_FORMATS = format_help(PLAN_FORMAT_NAMES)


def yes_help(action: str, always_asks: bool = False) -> str:
    """The help of a command's --yes, alike on every command: `always_asks` for the commands
    that ask on every environment (apply, adjust, status moves, transactions set-status); the
    others ask only on a protected one (surveyctl.safety.needs_question)."""
    if always_asks:
        return (
            f"{action} without asking (needed without a terminal; a protected environment "
            "also needs --env NAME)."
        )
    return (
        f"{action} without asking (only a protected environment asks; without a terminal it "
        "needs --env NAME too)."
    )


class FormatChoice(click.Choice):
    """The choices of `--format`; the format for people answers to `text` and to `table`
    alike, whichever name the command shows, so one spelling works on every command."""

    def convert(self, value, param, ctx):
        human = next((c for c in self.choices if c in HUMAN_FORMATS), None)
        if value in HUMAN_FORMATS and human is not None:
            value = human
        return super().convert(value, param, ctx)


def format_option(*choices: str, help: str | None = None):
    """`--format` with `choices` (the first is the default), passed as `output_format`."""
    return click.option(
        "--format",
        "output_format",
        type=FormatChoice(choices),
        default=choices[0],
        show_default=True,
        help=help or format_help(choices),
    )


class FilePath(click.Path):
    """A file or folder path, as click.Path gives it, but an empty one is refused: Python reads
    '' as the current folder, so `surveyctl validate "$FILE"` with FILE unset would check (and
    `fmt` rewrite, `apply` apply) every manifest below it, and `--out ''` would name a folder.
    So is `-`, which many tools read as stdin or stdout: here it would silently be a file
    named "-" in the current folder (`./-` still names one)."""

    def convert(self, value, param, ctx):
        if isinstance(value, str) and not value:
            self.fail("an empty path names no file or folder", param, ctx)
        if value == "-":
            self.fail(
                "'-' is not standard input or output here: name a file (./- for one called -)",
                param,
                ctx,
            )
        if isinstance(value, str) and ctx is not None and _an_option_of(ctx, value):
            # `--out --status 21`: click gives --out the next word, which would name a file.
            self.fail(
                f"{value!r} is an option, not a file: give the file right after the option "
                f"(./{value} for a file of that name)",
                param,
                ctx,
            )
        if isinstance(value, str) and value.startswith("-") and isinstance(param, click.Option):
            # `--out --fromat json`: a misspelt option, or one of another command, would
            # otherwise be the name of the file written (and the next word an argument).
            from surveyctl.suggest import suggest  # not at startup: `--help` imports this module

            hint = suggest(value.split("=", 1)[0], _option_names(ctx)) if ctx else ""
            self.fail(
                f"{value!r} starts with '-' and reads as an option, not a file{hint}: give the "
                f"file right after the option, and use ./{value} for a file whose name starts "
                "with -",
                param,
                ctx,
            )
        return super().convert(value, param, ctx)


def _option_names(ctx: click.Context) -> list[str]:
    """The names of the options of the command and of the root's."""
    commands = [c.command for c in (ctx, ctx.find_root()) if c is not None]
    return [
        name
        for command in commands
        for p in command.params
        for name in getattr(p, "opts", []) + getattr(p, "secondary_opts", [])
    ]


def _an_option_of(ctx: click.Context, value: str) -> bool:
    """Whether `value` is the name of an option of the command (or of the root's)."""
    if not value.startswith("-"):
        return False
    return value.split("=", 1)[0] in _option_names(ctx)


# A ps_survey_id as the commands take it: positive, and within the service's 64-bit integers.
# Checked before any request: 0 or 99999999999999999999999 would otherwise be sent, for the
# service to refuse (or to read as another path).
MAX_ID = 2**63 - 1


class SurveyId(click.IntRange):
    """A ps_survey_id: what is not a whole number is said not to be one, and where ids are
    found. click's words were "'coffee-us' is not a valid integer range", for a manifest's name
    given where its survey's id is due."""

    name = "survey id"

    def convert(self, value, param, ctx):
        if isinstance(value, str):
            try:
                int(value)
            except ValueError:
                managed = _managed_survey_id(ctx, value)
                if managed is not None:
                    address, survey_id, environment = managed
                    self.fail(
                        f"{value!r} is not a survey id but a manifest's name: {address} is "
                        f"ps_survey_id {survey_id} in the state of environment "
                        f"{environment!r}; give {survey_id}",
                        param,
                        ctx,
                    )
                self.fail(
                    f"{value!r} is not a survey id: a ps_survey_id is a whole number, and "
                    "`surveyctl state list` shows those of the surveys surveyctl manages",
                    param,
                    ctx,
                )
        return super().convert(value, param, ctx)


def _managed_survey_id(ctx: click.Context | None, name: str) -> tuple[str, int, str] | None:
    """(address, ps_survey_id, environment) of the survey the state manages under `name` (a
    manifest's name or address, where an id was due), or None. Only the state is read, never
    the marketplace; a state that cannot be read leaves the usual message."""
    from surveyctl.cli.context import CliContext
    from surveyctl.errors import SurveyctlError

    context = ctx.find_object(CliContext) if ctx is not None else None
    if context is None:
        return None
    try:
        environment = context.environment().name
        state = context.state_store().load()
    except (SurveyctlError, OSError):
        return None
    from surveyctl.state.records import SurveyRecord

    for address in (name, f"Survey/{name}"):
        record = state.resources.get(address)
        if isinstance(record, SurveyRecord):
            return address, record.ps_survey_id, environment
    return None


SURVEY_ID = SurveyId(1, MAX_ID)


class Number(click.FloatRange):
    """A number within a range, as click.FloatRange, but NaN is refused: it compares false
    with every bound, so a range lets it through, and then a deadline of NaN is never reached
    and a socket refuses it as a timeout."""

    name = "number"  # click's word would be "float range": "'abc' is not a valid number."

    def convert(self, value, param, ctx):
        try:
            number = super().convert(value, param, ctx)
            if math.isnan(number):
                self.fail(f"{value!r} is not a number", param, ctx)
        except click.BadParameter as error:
            # A value from $VARIABLE is named by the variable: the option may be nowhere on
            # the command line (a CI job's environment), and pointing at it would mislead.
            from_variable = ctx and param and ctx.get_parameter_source(param.name)
            if from_variable is not ParameterSource.ENVIRONMENT:
                raise
            raise click.BadParameter(error.message, ctx, param, f"${param.envvar}") from None
        return number


# Every command that writes csv or tsv (`transactions list`, `surveys list`, `attributes`):
# their cells hold what others wrote (a survey's title, a supplier's names, an attribute's
# question), which a spreadsheet may run as a formula.
raw_cells_option = click.option(
    "--raw-cells",
    is_flag=True,
    help="csv and tsv: write text cells exactly as the service gave them. By default a text "
    "cell starting with =, +, -, @, a tab or a carriage return gets a leading ' so that a "
    "spreadsheet shows it instead of running it as a formula (numbers are never changed).",
)


# How long a command waits for the lock another command holds (apply, import, import-group,
# state rm|mv|migrate|rebuild).
lock_timeout_option = click.option(
    "--lock-timeout",
    type=Number(min=0),
    default=0,
    show_default=True,
    metavar="SECONDS",
    help="Wait this long for another command's state lock before giving up.",
)


class RegistryChoice(click.Choice):
    """A choice among what a registry holds when the command runs (a backend or a format
    registered after this module was imported is offered too), not when it was imported."""

    def __init__(self, names: Callable[[], Sequence[str]]):
        self._names = names
        super().__init__([])

    @property
    def choices(self) -> Sequence[str]:
        return tuple(self._names())

    @choices.setter
    def choices(self, value: Sequence[str]) -> None:
        pass  # the registry is the list


class FormatRegistryChoice(RegistryChoice, FormatChoice):
    """The registered output formats, `table` taken for `text` as on every command."""


def output_format_option(for_apply: bool = False, help: str | None = None):
    """`--format` among the registered output formats (surveyctl.render.formats), passed as
    `output_format`; text by default. The help lists PLAN_FORMAT_NAMES (APPLY_FORMAT_NAMES):
    the registry, and the renderers with it, load only when a command runs (30 ms of
    `plan --help` otherwise)."""

    def names() -> list[str]:
        from surveyctl.render import formats

        return formats.names(for_apply)

    shown = APPLY_FORMAT_NAMES if for_apply else PLAN_FORMAT_NAMES
    return click.option(
        "--format",
        "output_format",
        type=FormatRegistryChoice(names),
        default="text",
        show_default=True,
        metavar=f"[{'|'.join(shown)}]",
        help=help,
    )


class SpelledCommand(click.Command):
    """A command that remembers how the user spelled each option with several names, so that
    an error about `--out` does not speak of `--output` (click keeps only the value)."""

    def parse_args(self, ctx: click.Context, args: list[str]) -> list[str]:
        spelled: dict[str, str] = {}
        for token in args:
            if token == "--":
                break
            written = token.split("=", 1)[0]
            for param in self.params:
                if isinstance(param, click.Option) and param.name and written in param.opts:
                    spelled[param.name] = written
        ctx.meta[_SPELLED] = spelled
        return super().parse_args(ctx, args)


_SPELLED = "surveyctl.spelled"


def spelled(name: str) -> str:
    """The option `name` (a parameter name) as the user typed it on the current command; its
    first spelling when it was not typed or the command does not record spellings."""
    ctx = click.get_current_context()
    written = ctx.meta.get(_SPELLED, {}).get(name)
    if written is not None:
        return written
    for param in ctx.command.params:
        if param.name == name and param.opts:
            return param.opts[0]
    return f"--{name}"
