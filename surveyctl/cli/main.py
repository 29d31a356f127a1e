"""The `surveyctl` root command: global options, lazy sub-commands, and error reporting.

Sub-commands are imported only when used, so `surveyctl --help` and a plain `validate` stay
fast. A `SurveyctlError` becomes one line on stderr and exit code 1; `--debug` also shows the
traceback and the HTTP exchange. Any other exception is a bug: its traceback is shown and the
exit code is 1. The API key is redacted from all of it (the access-token header is never logged).
"""

from __future__ import annotations

import importlib
import logging
import sys
import traceback
from pathlib import Path

import click

from surveyctl import __version__
from surveyctl.cli.context import CliContext
from surveyctl.errors import SurveyctlError

# command name -> "module:attribute"; each command group lives in its own module.
COMMANDS: dict[str, str] = {
    "transactions": "surveyctl.cli.transactions:transactions",
    "text-check": "surveyctl.cli.textcheck:text_check",
    "adjust": "surveyctl.cli.adjust:adjust",
    "link": "surveyctl.cli.link:link",
    "attributes": "surveyctl.cli.attributes:attributes",
    "sandbox": "surveyctl.cli.sandbox:sandbox",
    "state": "surveyctl.cli.state:state",
    "force-unlock": "surveyctl.cli.state:force_unlock_command",
    "validate": "surveyctl.cli.validate:validate_command",
    "render": "surveyctl.cli.validate:render_command",
    "plan": "surveyctl.cli.plan:plan_command",
    "status": "surveyctl.cli.status:status_command",
    "apply": "surveyctl.cli.plan:apply_command",
    "import": "surveyctl.cli.imports:import_command",
    "import-group": "surveyctl.cli.imports:import_group_command",
    "surveys": "surveyctl.cli.surveys:surveys",
}


class UserError(click.ClickException):
    """A SurveyctlError on its way out: click prints `Error: <message>` and exits 1."""


class LazyGroup(click.Group):
    """A group whose sub-commands are imported on first use, and that reports user errors."""

    def list_commands(self, ctx: click.Context) -> list[str]:
        return sorted(COMMANDS)

    def get_command(self, ctx: click.Context, name: str) -> click.Command | None:
        target = COMMANDS.get(name)
        if target is None:
            return None
        module_name, attribute = target.split(":")
        return getattr(importlib.import_module(module_name), attribute)

    def invoke(self, ctx: click.Context):
        try:
            return super().invoke(ctx)
        except (click.ClickException, click.exceptions.Exit, click.Abort):
            raise
        except SurveyctlError as exc:
            if isinstance(ctx.obj, CliContext) and ctx.obj.debug:
                click.echo(_redacted(traceback.format_exc()), err=True, nl=False)
            raise UserError(_redacted(str(exc))) from exc
        except Exception as exc:
            # A bug in surveyctl: its traceback is what a report needs, but never with the key.
            click.echo(_redacted(traceback.format_exc()), err=True, nl=False)
            raise UserError(
                f"unexpected {type(exc).__name__} (a bug in surveyctl; the traceback above "
                "shows where)"
            ) from exc


def _redacted(text: str) -> str:
    """`text` without the API key of any client made so far (imported late: the client
    pulls in requests, which `--help` does not need)."""
    from surveyctl.api.client import redact

    return redact(text)


@click.group(cls=LazyGroup, context_settings={"help_option_names": ["-h", "--help"]})
@click.version_option(__version__, prog_name="surveyctl")
@click.option("--env", "env_name", metavar="NAME", help="Environment to use (or $SURVEYCTL_ENV).")
@click.option(
    "--config",
    "config_path",
    type=click.Path(dir_okay=False, path_type=Path),
    help="Configuration file (default: ./surveyctl.yaml when present).",
)
@click.option("--debug", is_flag=True, help="Show tracebacks and the HTTP exchange.")
@click.pass_context
def cli(ctx: click.Context, env_name: str | None, config_path: Path | None, debug: bool) -> None:
    """Survey-as-code for buyers on a respondent marketplace.

    Without configuration every command targets the embedded sandbox, a local marketplace
    whose data lives in .surveyctl/sandbox.db.
    """
    ctx.obj = CliContext(env_name=env_name, config_path=config_path, debug=debug)
    if debug:
        logging.basicConfig(
            level=logging.DEBUG, stream=sys.stderr, format="%(name)s %(message)s", force=True
        )
        # urllib3 logs no headers, so the access token stays out of the debug output.
        logging.getLogger("urllib3").setLevel(logging.INFO)


def main() -> None:
    """Entry point of the console script and of `python -m surveyctl`."""
    cli(prog_name="surveyctl")
