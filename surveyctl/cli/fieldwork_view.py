"""How `surveyctl status` draws fieldwork: bars with rich on a terminal, plain text otherwise,
or JSON; once, or refreshed every `--watch SECONDS` until Ctrl-C (exit 0; SIGTERM and
SIGHUP stop it as they stop any command, 143 and 129).

The numbers come from `surveyctl.ops.fieldwork`; this module only draws them.
"""

from __future__ import annotations

import sys
import time
from collections.abc import Callable

import click

from surveyctl import signals
from surveyctl.cli.console import console, plain_table, redraws
from surveyctl.cli.context import CliContext, suggesting
from surveyctl.errors import SurveyctlError
from surveyctl.jsontext import dumps
from surveyctl.money import usd
from surveyctl.ops.fieldwork import Fieldwork, fieldwork, fieldwork_of_many
from surveyctl.reconcile.choices import DEFAULT_PARALLELISM
from surveyctl.redacting import redacted
from surveyctl.render.values import printable
from surveyctl.state import SurveyRecord
from surveyctl.statuses import CLOSED

BAR_WIDTH = 24


def show_fieldwork(
    ctx: CliContext,
    survey_id: int | None,
    output_format: str,
    watch: float | None,
    times: int | None,
) -> None:
    """Shows the fieldwork of SURVEY_ID, or of every managed survey, once or under --watch."""
    read = _reader(ctx, survey_id)
    if read is None:
        # A new project, or one whose surveys were all removed: nothing is wrong, there is
        # only nothing to show yet (a watch would have nothing to refresh).
        if output_format == "json":
            click.echo(dumps([], compact=watch is not None))
        click.echo(
            suggesting(
                f"No managed surveys in the state of environment {ctx.environment().name!r} "
                "yet: `surveyctl apply` creates them, and `surveyctl status SURVEY_ID` shows "
                "any survey by its id."
            ),
            err=True,
        )
        return
    if watch is None:
        views = read()
        _print(views, output_format, single=survey_id is not None, compact=False)
        _exit_on_errors(views)
        return
    try:
        last = _watch(read, output_format, survey_id is not None, watch, times)
    except KeyboardInterrupt as stop:
        # Ctrl-C is how a person ends a watch: not an error. SIGTERM and SIGHUP (a cancelled
        # CI job, `timeout`, a closed terminal) are not a person's choice, and exit as every
        # command a signal stops does (143, 129), so a script can tell a watch that was cut.
        if signals.describe(stop) != "Ctrl-C":
            raise
        click.echo("", err=True)
        return
    # A watch that ended by itself (--times, every survey closed) says, as one view does,
    # whether its last view left a survey unread: a script running it would see exit 0 else.
    _exit_on_errors(last)


def _reader(ctx: CliContext, survey_id: int | None) -> Callable[[], list[Fieldwork]] | None:
    """What reads the views: of SURVEY_ID, else of every managed survey (None when the state
    holds none)."""
    if survey_id is not None:
        try:  # the manifest name is a courtesy: a state that cannot be read does not matter
            by_id = {ps_id: name for name, ps_id in _managed(ctx)}
        except SurveyctlError:
            by_id = {}
        client = ctx.client()
        return lambda: [fieldwork(client, survey_id, by_id.get(survey_id))]
    names = _managed(ctx)
    if not names:
        return None
    client = ctx.client()
    surveys = [(ps_id, name) for name, ps_id in names]
    return lambda: fieldwork_of_many(client, surveys, DEFAULT_PARALLELISM)


def _managed(ctx: CliContext) -> list[tuple[str, int]]:
    """(address, ps_survey_id) of every survey in state."""
    state = ctx.state_store().load()
    return [
        (address, record.ps_survey_id)
        for address, record in sorted(state.resources.items())
        if isinstance(record, SurveyRecord)
    ]


def _watch(
    read, output_format: str, single: bool, interval: float, times: int | None
) -> list[Fieldwork]:
    """Shows the fieldwork every `interval` seconds until `times` views, or every survey is
    closed; returns the last views shown."""
    shown = 0
    live = None
    # Redrawn in place only where a redraw is seen as one (console.redraws): a CI runner that
    # attaches a pseudo-terminal would keep every frame, cursor codes and all, and a TERM=dumb
    # terminal showed only the last view. There, as piped, each view follows a time line.
    if output_format == "text" and redraws(sys.stdout):
        from rich.live import Live

        live = Live(console=console(), auto_refresh=False)
        live.start()
    try:
        while True:
            views = read()
            if live is not None:
                live.update(_rich(views), refresh=True)
            else:
                if output_format == "text":
                    click.echo(f"-- {time.strftime('%H:%M:%S')} --")
                _print(views, output_format, single, compact=True)
            shown += 1
            finished = all(v.status == CLOSED for v in views)
            if finished or (times is not None and shown >= times):
                return views
            _pause(interval)
    finally:
        if live is not None:
            live.stop()


def _pause(seconds: float) -> None:
    """Sleeps in short steps: a Ctrl-C that lands just before a long sleep begins is only
    acted on when that sleep ends, so one long sleep could keep a watch running a minute
    after the person asked it to stop."""
    deadline = time.monotonic() + seconds
    while (left := deadline - time.monotonic()) > 0:
        time.sleep(min(left, 0.2))


def _print(views: list[Fieldwork], output_format: str, single: bool, compact: bool) -> None:
    if output_format == "json":
        data = views[0].to_dict() if single else [v.to_dict() for v in views]
        click.echo(dumps(data, compact=compact))
    elif sys.stdout.isatty():
        console().print(_rich(views))
    else:
        click.echo(plain(views), nl=False)


def _exit_on_errors(views: list[Fieldwork]) -> None:
    if any(view.error for view in views):
        click.get_current_context().exit(1)


def _heading(view: Fieldwork) -> str:
    """The survey's line: its title comes from the service, shown as written (printable) and
    redacted here, before a terminal's width may wrap a key in it over two lines."""
    who = f"{view.name} (survey {view.survey_id})" if view.name else f"survey {view.survey_id}"
    if view.error:
        return f"{who}: cannot be read: {view.error}"
    return printable(redacted(f"{who} is {view.status_name}: {view.title}"))


def _incidence(view: Fieldwork) -> str:
    if view.incidence is None:
        return "n/a (nobody has reached the survey yet)"
    parts = ", ".join(f"{count} {name}" for name, count in view.outcomes.items())
    return f"{view.incidence:.1f}% ({parts})"


def plain(views: list[Fieldwork]) -> str:
    """The fieldwork as plain text with `#` bars, for logs and pipes."""
    lines: list[str] = []
    for view in views:
        lines.append(_heading(view))
        if view.error:
            lines.append("")
            continue
        rows = [("completes", f"{view.completes} / {view.goal}", _bar(view.progress))]
        rows += [("incidence", _incidence(view), ""), ("spend", usd(view.spend), "")]
        if view.quotas:
            rows.append(("quotas", "", ""))
        rows += [
            (f"  {q.buyer_quota_id}", f"{q.fielded} / {q.goal}", _bar(q.fill)) for q in view.quotas
        ]
        label_width = max(len(label) for label, _, _ in rows)
        value_width = max(len(value) for _, value, bar in rows if bar)
        for label, value, bar in rows:
            text = (
                f"  {label:<{label_width}}  {value:<{value_width}}  {bar}"
                if bar
                else (f"  {label:<{label_width}}  {value}")
            )
            lines.append(text.rstrip())
        lines.append("")
    return "\n".join(lines)


def _bar(share: float) -> str:
    filled = round(share * BAR_WIDTH)
    return f"[{'#' * filled}{'.' * (BAR_WIDTH - filled)}] {share * 100:5.1f}%"


def _rich(views: list[Fieldwork]):
    """The fieldwork as rich tables with progress bars, one per survey."""
    from rich.console import Group
    from rich.progress_bar import ProgressBar
    from rich.text import Text

    parts = []
    for view in views:
        parts.append(Text(_heading(view), style="bold"))
        if view.error:
            parts.append(Text(""))
            continue
        table = plain_table(show_header=False)
        table.add_column(no_wrap=True)
        table.add_column(justify="right", no_wrap=True)
        table.add_column(width=BAR_WIDTH)
        table.add_column(justify="right", no_wrap=True)

        rows = [("  completes", view.completes, view.goal, view.progress)]
        rows += [(f"    {q.buyer_quota_id}", q.fielded, q.goal, q.fill) for q in view.quotas]
        for label, done, goal, share in rows:
            bar = ProgressBar(total=1.0, completed=share, width=BAR_WIDTH)
            table.add_row(label, f"{done} / {goal}", bar, f"{share * 100:.1f}%")
        parts.append(table)
        parts.append(Text(f"  incidence {_incidence(view)}"))
        parts.append(Text(f"  spend {usd(view.spend)}"))
        parts.append(Text(""))
    return Group(*parts)
