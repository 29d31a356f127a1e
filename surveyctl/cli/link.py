"""`surveyctl link build|verify`: the respondent return link with its ps_hash (spec 4.12).

Works offline: the link is computed from the buyer's shared secret, read from an environment
variable so it never appears on a command line, in shell history or in output.
"""

from __future__ import annotations

import os

import click

from surveyctl.cli.options import WholeSummaries, quota_id_list, status_code
from surveyctl.config_checks import absent, is_variable_name, may_show_variable
from surveyctl.errors import ConfigError
from surveyctl.ops.links import ReturnLink, build_return_link, verify_return_link
from surveyctl.statuses import RETURN_STATUS_NAMES

DEFAULT_SECRET_ENV = "SURVEYCTL_RETURN_SECRET"


def _secret(variable: str) -> str:
    if not is_variable_name(variable):
        # The secret itself, pasted where its variable's name goes: never repeated.
        raise ConfigError(
            "--secret-env must name the environment variable that holds the secret (letters, "
            f"digits and underscores, such as {DEFAULT_SECRET_ENV}), never the secret itself"
        )
    value = os.environ.get(variable)
    if not value:
        shown = (
            f"${variable}"
            if may_show_variable(variable)
            else "the variable --secret-env names (not shown: it may be the secret)"
        )
        raise ConfigError(f"the buyer's shared secret is read from {shown}, which {absent(value)}")
    if value != value.strip():
        # A line break from `echo` or a secrets file: every ps_hash would be wrong, and the
        # marketplace would refuse each respondent's return without saying why.
        raise ConfigError(
            f"the buyer's shared secret in ${variable} starts or ends with whitespace (a line "
            "break, say), which would make every ps_hash wrong; set it without"
        )
    return value


_secret_option = click.option(
    "--secret-env",
    "secret_env",
    metavar="VAR",
    default=DEFAULT_SECRET_ENV,
    show_default=True,
    help="Environment variable that holds the buyer's shared secret.",
)


@click.group(name="link", cls=WholeSummaries)
def link() -> None:
    """Build and verify the respondent return link (ps_hash)."""


def _status(ctx: click.Context, param: click.Parameter, value: str) -> int:
    """A return status by name (`complete`) or code (`21`), as `transactions set-status`
    takes it."""
    code = status_code(value)
    if code in RETURN_STATUS_NAMES:
        return code
    known = ", ".join(f"{code} {name}" for code, name in sorted(RETURN_STATUS_NAMES.items()))
    raise click.BadParameter(f"{value!r} is not a return status: use one of {known}")


def _quota_ids(ctx: click.Context, param: click.Parameter, value: str) -> tuple[str, ...]:
    """The comma list of buyer_quota_ids; an empty item is refused, as `set-status` does,
    since a complete would silently count in fewer quotas than were meant."""
    ids = quota_id_list(value)
    if ids is None:
        raise click.BadParameter(f"{value!r} has an empty buyer_quota_id")
    return tuple(ids)


@link.command(name="build")
@click.option(
    "--status",
    callback=_status,
    required=True,
    help="Outcome of the session, by name or code: complete 21, overquota 17, term 18, "
    "quality 20, security 30.",
)
@click.option("--transaction-id", required=True, help="The transaction the respondent came with.")
@click.option(
    "--quota-id",
    "quota_ids",
    default="",
    callback=_quota_ids,
    help="QLC: buyer_quota_id values, comma-separated.",
)
@click.option("--sqlc", is_flag=True, help="Supplier-level QLC: append sqlc=true.")
@click.option("--url", "redirect_url", required=True, help="The marketplace's return URL.")
@_secret_option
def build(
    status: int,
    transaction_id: str,
    quota_ids: tuple[str, ...],
    sqlc: bool,
    redirect_url: str,
    secret_env: str,
) -> None:
    """Print the return link for one respondent, signed with ps_hash."""
    content = ReturnLink(status, transaction_id, quota_ids, sqlc)
    click.echo(build_return_link(redirect_url, content, _secret(secret_env)))


@link.command(name="verify")
@click.argument("url")
@_secret_option
def verify(url: str, secret_env: str) -> None:
    """Exit 0 when the ps_hash of URL matches, 1 with the reason when it does not."""
    content = verify_return_link(url, _secret(secret_env))
    quotas = f", quota_id {','.join(content.quota_ids)}" if content.quota_ids else ""
    sqlc = ", sqlc" if content.sqlc else ""
    click.echo(
        f"ps_hash matches: st {content.status} ({content.status_name}), "
        f"transaction {content.transaction_id}{quotas}{sqlc}"
    )
