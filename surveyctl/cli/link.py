"""`surveyctl link build|verify`: the respondent return link with its ps_hash (spec 4.12).

Works offline: the link is computed from the buyer's shared secret, read from an environment
variable so it never appears on a command line, in shell history or in output.
"""

from __future__ import annotations

import os

import click

from surveyctl.errors import ConfigError
from surveyctl.ops.links import ReturnLink, build_return_link, verify_return_link
from surveyctl.statuses import RETURN_STATUSES

DEFAULT_SECRET_ENV = "SURVEYCTL_RETURN_SECRET"


def _secret(variable: str) -> str:
    value = os.environ.get(variable, "")
    if not value:
        raise ConfigError(f"the buyer's shared secret is read from ${variable}, which is not set")
    return value


_secret_option = click.option(
    "--secret-env",
    "secret_env",
    metavar="VAR",
    default=DEFAULT_SECRET_ENV,
    show_default=True,
    help="Environment variable that holds the buyer's shared secret.",
)


@click.group(name="link")
def link() -> None:
    """Build and verify the respondent return link (ps_hash)."""


@link.command(name="build")
@click.option(
    "--status",
    type=click.Choice(sorted(RETURN_STATUSES)),
    required=True,
    help="Outcome of the session: complete 21, overquota 17, term 18, quality 20, security 30.",
)
@click.option("--transaction-id", required=True, help="The transaction the respondent came with.")
@click.option("--quota-id", default="", help="QLC: buyer_quota_id values, comma-separated.")
@click.option("--sqlc", is_flag=True, help="Supplier-level QLC: append sqlc=true.")
@click.option("--url", "redirect_url", required=True, help="The marketplace's return URL.")
@_secret_option
def build(
    status: str,
    transaction_id: str,
    quota_id: str,
    sqlc: bool,
    redirect_url: str,
    secret_env: str,
) -> None:
    """Print the return link for one respondent, signed with ps_hash."""
    quota_ids = tuple(q.strip() for q in quota_id.split(",") if q.strip())
    content = ReturnLink(RETURN_STATUSES[status], transaction_id, quota_ids, sqlc)
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
