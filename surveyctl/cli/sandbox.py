"""`surveyctl sandbox`: the local marketplace, served for other programs to use."""

from __future__ import annotations

import math
import threading
from pathlib import Path

import click

from surveyctl.cli.context import CliContext, pass_context
from surveyctl.cli.options import FilePath, Number, WholeSummaries
from surveyctl.errors import SurveyctlError


class SandboxOptionError(SurveyctlError):
    """An option of `sandbox serve` cannot be used."""


def _parse_key(value: str) -> tuple[str, int]:
    token, sep, buyer = value.partition("=")
    if not sep or not token or not buyer.strip().isdigit():
        raise SandboxOptionError(f"--key {value!r} must look like TOKEN=BUYER_ID, e.g. mine=3")
    return token, int(buyer)


@click.group(cls=WholeSummaries)
def sandbox() -> None:
    """The local marketplace: the Buyer API served from a SQLite file."""


# The longest --latency-ms: a day, as the longest --timeout. Far longer ones overflow the
# sleep of each request, which then answered 500 as a bug of the sandbox.
MAX_LATENCY_MS = 86_400_000


def _listen_host(ctx: click.Context, param: click.Parameter, value: str) -> str:
    """--host as given; an empty one is refused here, as the server would refuse it only with
    a traceback (every interface is 0.0.0.0, or ::)."""
    if not value.strip():
        raise click.BadParameter("an empty host: give an address, or 0.0.0.0 for every interface")
    return value


# The slowest --rate-limit above 0: a request a day. Slower ones told a client refused to
# come back in as many seconds as the rate is small (1e-300: a Retry-After of 300 digits).
MIN_RATE_LIMIT = 1 / 86_400


def _rate_limit(ctx: click.Context, param: click.Parameter, value: float) -> float:
    """--rate-limit as given: 0 (no limit) or at least a request a day, and finite: `inf`
    would read as the fastest limit and be none, a bucket of infinite tokens."""
    if math.isinf(value):
        raise click.BadParameter(
            f"{value:g} is not a rate: give requests per second (at least 0.0000116), or 0 for "
            "no limit"
        )
    if 0 < value < MIN_RATE_LIMIT:
        raise click.BadParameter(
            f"{value:g} is below a request a day: give 0 for no limit, or at least 0.0000116"
        )
    return value


@sandbox.command()
@click.option("--host", default="127.0.0.1", show_default=True, metavar="HOST",
              callback=_listen_host, help="Address to listen on.")  # fmt: skip
@click.option("--port", default=8080, show_default=True, type=click.IntRange(0, 65535),
              metavar="PORT", help="Port to listen on (0 picks a free one).")  # fmt: skip
@click.option("--db", "db_path", type=FilePath(dir_okay=False, path_type=Path),
              help="SQLite data file (default: .surveyctl/sandbox.db of the project).")  # fmt: skip
@click.option("--latency-ms", default=0, show_default=True,
              type=click.IntRange(0, MAX_LATENCY_MS), metavar="N",
              help="Delay every response by this many milliseconds.")  # fmt: skip
@click.option("--fail-rate", default=0.0, show_default=True, type=Number(0.0, 1.0),
              metavar="P",
              help="Share of /buyers requests answered 503 or 429 (with Retry-After).")  # fmt: skip
@click.option("--seed", type=int, metavar="N",
              help="Seed of the fault draws, for reproducible runs.")  # fmt: skip
@click.option("--key", "keys", multiple=True, metavar="TOKEN=BUYER_ID",
              help="Add an access token for a buyer (repeatable).")  # fmt: skip
@click.option("--threads", default=32, show_default=True, type=click.IntRange(1, 1024),
              metavar="N",
              help="Requests served at once (a delayed request holds one).")  # fmt: skip
@click.option("--strict", is_flag=True,
              help="Refuse request fields the API's schemas do not list, query parameters "
                   "the calls do not list and integers written with a fraction, naming "
                   "them.")  # fmt: skip
@click.option("--rate-limit", default=0.0, show_default=True, metavar="R",
              type=Number(0), callback=_rate_limit,
              help="Requests per second per access-token, at least 0.0000116 (one a day); "
              "past it 429 with Retry-After (0: no limit).")  # fmt: skip
@pass_context
def serve(
    context: CliContext,
    host: str,
    port: int,
    db_path: Path | None,
    latency_ms: int,
    fail_rate: float,
    seed: int | None,
    keys: tuple[str, ...],
    threads: int,
    strict: bool,
    rate_limit: float,
) -> None:
    """Serve the Buyer API on HOST:PORT until Ctrl-C; data persists in the db file."""
    from surveyctl.cli.waiting import StopRequests
    from surveyctl.sandbox.errors import SandboxError
    from surveyctl.sandbox.server import SandboxOptions, build, url_host

    extra = dict(_parse_key(k) for k in keys)
    if db_path is None:
        db_path = context.config().sandbox_db
    options = SandboxOptions(
        db_path=db_path,
        host=host,
        port=port,
        latency_ms=latency_ms,
        fail_rate=fail_rate,
        seed=seed,
        keys=extra,
        threads=threads,
        strict=strict,
        rate_limit=rate_limit,
    )
    try:
        server = build(options)
        server.listen()
    except SandboxError as exc:
        raise SurveyctlError(str(exc)) from exc
    root = f"http://{url_host(host)}:{server.port}"
    click.echo(f"sandbox marketplace serving {root} (data: {db_path})")
    click.echo(f"  v2 root: {root}/buyers/v2")
    click.echo(f"  v3 root: {root}/buyers/v3")
    tokens = server.accounts.keys.items()
    for token, buyer_id in sorted(tokens, key=lambda item: (item[1], item[0])):
        click.echo(f"  access-token {token}  (buyer {buyer_id})")
    if strict:
        click.echo(
            "  strict: request fields and query parameters the API does not list, and integers"
            " written with a fraction: refused"
        )
    if latency_ms or fail_rate:
        click.echo(f"  faults: latency {latency_ms} ms, fail rate {fail_rate}, seed {seed}")
    if rate_limit:
        click.echo(f"  rate limit: {rate_limit:g} requests per second per access-token")
    # The server loop runs in a thread of its own and a signal only ends the wait: raised
    # inside the loop, a Ctrl-C or SIGTERM that came just as it started left stop() waiting
    # for it forever.
    serving = threading.Thread(target=server.serve, name="surveyctl-sandbox", daemon=True)
    try:
        with StopRequests() as requests:
            serving.start()
            click.echo("Press Ctrl-C to stop.", nl=True)
            requests.wait(serving.is_alive)
        click.echo("stopped", err=True)
    finally:
        server.stop()
        serving.join(timeout=5)
        server.store.close()


@sandbox.command()
@click.option("--strict", is_flag=True, help="Describe the sandbox served with --strict.")
def openapi(strict: bool) -> None:
    """Print the OpenAPI 3.1 description of the Buyer API the sandbox implements (JSON)."""
    import json

    from surveyctl.sandbox.openapi import openapi_document

    click.echo(json.dumps(openapi_document(strict=strict), indent=2, ensure_ascii=False))


from surveyctl.cli.sandbox_simulate import simulate  # noqa: E402  (sandbox-only traffic)

sandbox.add_command(simulate)
