"""The live reads of one plan: started as soon as the state is known, and no more than needed.

`start` begins in the background while the manifests load: each kind's listing (the survey
list's `mod_on`, see kinds/survey_listing.py), then a GET of every managed resource the listing
shows changed since surveyctl last wrote or saw it (of every one, when there is no listing).
Once the manifests are known, `result` answers for each resource: unchanged without a read
when its listed version is the recorded one, its manifest is what was last applied and no
kind's reads say its listed version cannot be trusted (`Kind.stale_listings`: a survey that
joined or left an exclusion group), else its GET (already under way, or sent then). With
`refresh=False` (`plan --refresh=false`) the kinds that can plan against their last-applied
body are not read at all.
"""

from __future__ import annotations

import sys
import threading
from concurrent.futures import Future, ThreadPoolExecutor
from typing import Any

from surveyctl.reconcile import kinds
from surveyctl.reconcile.live import LiveResult, fetch_one
from surveyctl.reconcile.marketplace import Marketplace
from surveyctl.state import State

# How long the interpreter lets one thread run before another may take over, while reads are
# in flight. With Python's 5 ms the manifests' loading and the planning (the main thread) held
# each answer up to 5 ms before its worker could take it and send the next read, several times
# a read (each socket call gives the interpreter up and takes it back). A plan of 1,000 surveys
# read one by one: 6.3 s at 5 ms, 6.0 s at 1 ms, 5.85 s at 0.2 ms, no better below.
READ_SWITCH_INTERVAL_S = 0.0002


class _FastSwitching:
    """The short switch interval while any plan's reads are open, in whatever order plans in
    several threads open and close them; the interval found by the first is given back by the
    last."""

    def __init__(self) -> None:
        self._lock = threading.Lock()
        self._open = 0
        self._found = sys.getswitchinterval()

    def open(self) -> None:
        with self._lock:
            if not self._open:
                self._found = sys.getswitchinterval()
                sys.setswitchinterval(min(self._found, READ_SWITCH_INTERVAL_S))
            self._open += 1

    def close(self) -> None:
        with self._lock:
            self._open -= 1
            if not self._open:
                sys.setswitchinterval(self._found)


_switching = _FastSwitching()


class LiveReads:
    """The reads of one plan against `client`, `parallelism` at a time. Use as a context
    manager (the workers are stopped at its end)."""

    def __init__(
        self, client: Marketplace, state: State, parallelism: int, refresh: bool = True
    ) -> None:
        self.client = client
        self.state = state
        self.refresh = refresh
        self.parallelism = max(1, parallelism)
        self._pool = ThreadPoolExecutor(max_workers=max(1, parallelism))
        self._reads: dict[str, Future[LiveResult]] = {}
        self._lock = threading.Lock()  # the listing's worker and the planner both send reads
        self._versions: dict[str, Future[dict[str, Any] | None]] = {}
        self._unchanged: dict[str, bool] = {}  # address -> what _listed_unchanged found
        self._stale: set[str] | None = None  # what the kinds' stale_listings said, once asked
        self.results: dict[str, LiveResult] = {}

    def __enter__(self) -> LiveReads:
        _switching.open()
        return self

    def __exit__(self, *exc_info: object) -> None:
        try:
            self._pool.shutdown(wait=True, cancel_futures=True)
        finally:
            _switching.close()

    def start(self) -> LiveReads:
        """Lists each kind's versions and reads what changed, in the background. Again after
        `state` changed (a lost create resolved), it starts only the kinds not started yet;
        a resource the listing did not cover is read when asked for."""
        for kind in kinds.in_order():
            records = self._records(kind)
            if not records or kind.name in self._versions:
                continue
            if not self.refresh and all(kind.state_body(r) is not None for r in records.values()):
                continue
            self._versions[kind.name] = self._pool.submit(self._list_then_read, kind, records)
        return self

    def _records(self, kind: kinds.Kind) -> dict[str, Any]:
        """address -> record of each resource of `kind` in the state."""
        return {
            address: record
            for address, record in sorted(self.state.resources.items())
            if kinds.of_address(address) is kind
        }

    def _list_then_read(self, kind: kinds.Kind, records: dict[str, Any]) -> dict[str, Any] | None:
        versions = kind.versions(self.client, records)
        for address, record in records.items():
            if versions is None or versions.get(address) != getattr(record, "mod_on", None):
                self._read(address, record)
        return versions

    def result(
        self, kind: kinds.Kind, address: str, record: Any, manifest: Any
    ) -> LiveResult | None:
        """The live result of the managed resource `address` that `manifest` names (None when
        it is not managed); waits for the listing and for its read."""
        if record is None:
            return None
        if not self.refresh and (body := kind.state_body(record)) is not None:
            return self._keep(LiveResult(address, body=body, from_state=True))
        if self._listed_unchanged(kind, address, record, manifest):
            return self._keep(LiveResult(address, unchanged=True))
        return self._keep(self._read(address, record).result())

    def expect(self, kind: kinds.Kind, wanted: dict[str, tuple[Any, Any]]) -> None:
        """Sends now every read that `result` will want of `wanted` (address -> its record
        and manifest; waits for the kind's listing): asked for one by one, each read was
        waited for before the next was sent, so a plan of 1,000 changed manifests whose
        surveys the list showed unchanged read them one after the other."""
        for address, (record, manifest) in wanted.items():
            if record is None:
                continue
            if not self.refresh and kind.state_body(record) is not None:
                continue
            if not self._listed_unchanged(kind, address, record, manifest):
                self._read(address, record)

    def given(self, bodies: dict[str, dict]) -> None:
        """Takes the live bodies this run read already (address -> body: the adopted twins
        the identity check read to make their records) as the reads of those addresses. They
        were read in this run, as every body a plan is made from is; reading them again sent
        2,012 requests for an adoption of 999 surveys where 1,013 do."""
        with self._lock:
            for address, body in bodies.items():
                if address in self._reads:
                    continue  # read already: keep what the plan may have planned from
                done: Future[LiveResult] = Future()
                done.set_result(LiveResult(address, body=body))
                self._reads[address] = done

    def _listed_unchanged(self, kind: kinds.Kind, address: str, record: Any, manifest: Any) -> bool:
        """Whether the kind's listing shows `address` as last written and its manifest is what
        was last applied (waits for the listing). Decided once an address: `expect` asks
        before `result` does, and the answer compares the manifest's whole body (about 0.05 ms
        a survey, 6 % of a no-op plan of 1,000 listed surveys when asked twice)."""
        known = self._unchanged.get(address)
        if known is not None:
            return known
        listing = self._versions.get(kind.name)
        versions = listing.result() if listing is not None else None
        unchanged = (
            versions is not None
            and address in versions
            and kind.unchanged(record, versions[address], manifest)
            and address not in self._stale_listings()
        )
        self._unchanged[address] = unchanged
        return unchanged

    def _stale_listings(self) -> set[str]:
        """The resources whose listed version the kinds' own reads say not to trust (a
        survey that joined or left an exclusion group: editing a group need not move its
        members' `mod_on`), asked of every kind once, when a listing first spares a read.
        A plan that reads each resource never asks: it reads them all anyway."""
        if self._stale is None:
            stale: set[str] = set()
            for kind in kinds.in_order():
                records = self._records(kind)
                stale |= kind.stale_listings(
                    self.client,
                    self.state,
                    lambda address, records=records: self._read(address, records[address]).result(),
                    self.parallelism,
                )
            self._stale = stale
        return self._stale

    def read_all(self, records: dict[str, Any]) -> dict[str, LiveResult]:
        """The live bodies of `records` (address -> record), read side by side whatever the
        listing says (a resource no manifest names is planned from its body)."""
        futures = {address: self._read(address, record) for address, record in records.items()}
        return {address: self._keep(future.result()) for address, future in futures.items()}

    def _read(self, address: str, record: Any) -> Future[LiveResult]:
        kind = kinds.of_address(address)
        with self._lock:
            future = self._reads.get(address)
            if future is None:
                future = self._reads[address] = self._pool.submit(
                    read_live, self.client, address, lambda client: kind.read(client, record)
                )
        return future

    def _keep(self, result: LiveResult) -> LiveResult:
        self.results[result.address] = result
        return result


def read_live(client: Marketplace, address: str, fetch) -> LiveResult:
    """One live read, tried once more when it still fails after the client's own retries.

    Under heavy faults (half of all requests refused) one read in 64 still fails after the
    client's retries, so a plan of 200 surveys would hardly ever read them all, and a plan that
    cannot read everything never says "No changes". A second round makes that one in 4,096.
    """
    result = fetch_one(client, address, fetch)
    return fetch_one(client, address, fetch) if result.error else result
