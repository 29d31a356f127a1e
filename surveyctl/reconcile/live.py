"""Reads the live state of every managed resource: one GET each, in parallel."""

from __future__ import annotations

from collections.abc import Callable, Iterable
from concurrent.futures import ThreadPoolExecutor
from dataclasses import dataclass
from typing import Any

from surveyctl.errors import ApiError, SurveyctlError
from surveyctl.reconcile.marketplace import Marketplace

# How many reads (and writes) run at once unless a command says otherwise.
DEFAULT_PARALLELISM = 10


@dataclass
class LiveResult:
    """The live body of one resource; `gone` when the service answered 404."""

    address: str
    body: dict | None = None
    gone: bool = False
    error: str | None = None


def fetch_all(
    client: Marketplace,
    requests: Iterable[tuple[str, Callable[[Marketplace], Any]]],
    parallelism: int = DEFAULT_PARALLELISM,
) -> dict[str, LiveResult]:
    """Runs `fetch(client)` for each (address, fetch) with `parallelism` workers."""

    items = list(requests)
    with ThreadPoolExecutor(max_workers=max(1, parallelism)) as pool:
        results = pool.map(lambda item: fetch_one(client, *item), items)
        return {result.address: result for result in results}


def fetch_one(client: Marketplace, address: str, fetch: Callable[[Marketplace], Any]) -> LiveResult:
    """`fetch(client)` as a LiveResult: a 404 means gone, other errors are kept as text."""
    try:
        return LiveResult(address, body=fetch(client))
    except ApiError as exc:
        if exc.status == 404:
            return LiveResult(address, gone=True)
        return LiveResult(address, error=str(exc))
    except SurveyctlError as exc:
        return LiveResult(address, error=str(exc))
