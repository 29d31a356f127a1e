"""Normal traffic beside many idle connections: the sandbox keeps serving.

Starts `surveyctl sandbox serve` in its own process (default --threads 32), opens `--idle`
TCP connections that never send a byte (200 by default, far more than the request threads),
then sends GETs of one survey from `--clients` threads for `--seconds` and prints the latency
percentiles. Target: p99 under 100 ms. Before the fix, as many idle connections as threads
made every other request wait for the 60 s idle timeout.

    python benchmarks/idle_connections.py [--idle 200] [--clients 4] [--seconds 10]
"""

from __future__ import annotations

import argparse
import os
import socket
import statistics
import tempfile
import threading
import time
from pathlib import Path

import requests

from surveyctl.sandbox.process import served

HEADERS = {"access-token": "sandbox-buyer-1"}
SURVEY = {
    "survey_title": "Idle connections benchmark",
    "survey_category_code": 231,
    "survey_localization": "en_US",
    "completes_required": 100,
    "expected_ir": 40,
    "expected_loi": 12,
    "live_url": "https://survey.example.com/s?tid=[%%transaction_id%%]",
    "field_time": 14,
}
TARGET_P99_S = 0.100


def _traffic(url: str, stop_at: float, latencies: list[float], errors: list[str]) -> None:
    with requests.Session() as session:
        session.headers.update(HEADERS)
        while time.monotonic() < stop_at:
            began = time.perf_counter()
            try:
                response = session.get(url, timeout=70)
            except requests.RequestException as exc:
                errors.append(type(exc).__name__)
                continue
            latencies.append(time.perf_counter() - began)
            if response.status_code != 200:
                errors.append(str(response.status_code))


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--idle", type=int, default=200, help="idle connections held open")
    parser.add_argument("--clients", type=int, default=4, help="threads sending normal traffic")
    parser.add_argument("--seconds", type=float, default=10.0)
    args = parser.parse_args()

    with tempfile.TemporaryDirectory() as folder, served(Path(folder) / "idle.db") as sandbox:
        created = requests.post(
            sandbox.url + "/buyers/v2/surveys", json=SURVEY, headers=HEADERS, timeout=30
        )
        created.raise_for_status()
        url = f"{sandbox.url}/buyers/v2/surveys/{created.json()['ps_survey_id']}"
        host, port = sandbox.url.rsplit("/", 1)[-1].split(":")
        idle = [socket.create_connection((host, int(port)), timeout=5) for _ in range(args.idle)]
        latencies: list[float] = []
        errors: list[str] = []
        stop_at = time.monotonic() + args.seconds
        clients = [
            threading.Thread(target=_traffic, args=(url, stop_at, latencies, errors))
            for _ in range(args.clients)
        ]
        for client in clients:
            client.start()
        for client in clients:
            client.join()
        still_open = sum(1 for connection in idle if _open(connection))
        for connection in idle:
            connection.close()

    cuts = statistics.quantiles(latencies, n=100) if len(latencies) > 1 else [float("nan")] * 99
    print(f"load: {os.getloadavg()[0]:.2f} (1-min average)")
    print(f"idle connections: {args.idle} ({still_open} still open at the end)")
    print(f"requests: {len(latencies)} in {args.seconds:.0f} s from {args.clients} threads")
    print(f"errors: {len(errors)} {sorted(set(errors))}")
    print(f"latency: p50 {cuts[49] * 1000:.1f} ms, p99 {cuts[98] * 1000:.1f} ms")
    verdict = "met" if cuts[98] < TARGET_P99_S and not errors else "NOT met"
    print(f"target p99 < {TARGET_P99_S * 1000:.0f} ms with no error: {verdict}")


def _open(connection: socket.socket) -> bool:
    """Whether the server still holds the connection (no EOF waiting to be read)."""
    connection.setblocking(False)
    try:
        return connection.recv(1, socket.MSG_PEEK) != b""
    except BlockingIOError:
        return True
    except OSError:
        return False


if __name__ == "__main__":
    main()
