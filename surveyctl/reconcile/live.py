"""Reads the live state of every managed resource: one GET each, in parallel."""

from __future__ import annotations

from collections.abc import Callable, Iterable
from dataclasses import dataclass
from typing import Any

from surveyctl.errors import ApiError, SurveyctlError, key_refused
from surveyctl.reconcile.choices import DEFAULT_PARALLELISM
from surveyctl.reconcile.marketplace import Marketplace


@dataclass
class LiveResult:
    """The live body of one resource; `gone` when the service answered 404.

    `unchanged`: not read, because the service lists it as surveyctl last wrote (or saw) it and
    its manifest is what was last applied; `body` is then None. `from_state`: not read
    (`plan --refresh=false`); `body` is the body state last recorded."""

    address: str
    body: dict | None = None
    gone: bool = False
    error: str | None = None
    unchanged: bool = False
    from_state: bool = False


def fetch_all(
    client: Marketplace,
    requests: Iterable[tuple[str, Callable[[Marketplace], Any]]],
    parallelism: int = DEFAULT_PARALLELISM,
) -> dict[str, LiveResult]:
    """Runs `fetch(client)` for each (address, fetch) with `parallelism` workers."""
    from concurrent.futures import ThreadPoolExecutor  # and logging: not for a command's --help

    items = list(requests)
    with ThreadPoolExecutor(max_workers=max(1, parallelism)) as pool:
        results = pool.map(lambda item: fetch_one(client, *item), items)
        return {result.address: result for result in results}


def fetch_one(client: Marketplace, address: str, fetch: Callable[[Marketplace], Any]) -> LiveResult:
    """`fetch(client)` as a LiveResult: a 404 means gone, other errors are kept as text, and a
    refused key (401) ends the command (KeyRefused)."""
    try:
        return LiveResult(address, body=fetch(client))
    except ApiError as exc:
        if exc.status == 404:
            return LiveResult(address, gone=True)
        if (refused := key_refused(exc)) is not None:
            # The key is refused, not this resource: each read would fail alike, and a plan
            # of a thousand surveys would say so a thousand times, each advising another run.
            raise refused from exc
        return LiveResult(address, error=str(exc))
    except SurveyctlError as exc:
        return LiveResult(address, error=str(exc))
