"""The floor under a plan that reads each survey: GETs alone, P at a time, nothing else.

Serves the sandbox in its own process with latency L (as benchmarks/plan_process.py does),
creates one survey of 12 quotas, then sends N GETs of it, P in flight, three ways:
- "bare server": the sockets below against a server of the standard library in its own
  process that sleeps L and answers the survey's body as bytes it holds (no routing, no
  store, no JSON): what this machine's threads, sleeps and loopback cost alone;
- "sockets": P threads, each with one kept-alive `http.client` connection, decoding each body
  with `json` (the least a Python client can do per read), against the sandbox;
- "surveyctl's client": `ApiClient.get_survey` from a pool of P threads, as a plan reads.
Neither loads a manifest, plans or starts a process. Prints each run, the median and its ratio
to the bound N x L / P: what `surveyctl plan` could reach at best on this machine with this
server, before its own start-up, manifests and planning.

    python benchmarks/read_floor.py --surveys 200 1000 --latency-ms 50 --parallelism 10
"""

from __future__ import annotations

import argparse
import http.client
import json
import os
import statistics
import subprocess
import sys
import tempfile
import threading
import time
from collections.abc import Callable
from concurrent.futures import ThreadPoolExecutor
from contextlib import contextmanager
from pathlib import Path
from urllib.parse import urlsplit

import requests
from sandbox_rps import HEADERS, SURVEY, TOKEN

from surveyctl.api.client import ApiClient
from surveyctl.sandbox.process import served

# The bare server: the standard library's threading HTTP server, keep-alive, sleeping L before
# it answers the body it was given (Nagle off, as cheroot has it, or each answer waits 40 ms).
BARE_SERVER = """
import sys, time
from http.server import BaseHTTPRequestHandler, ThreadingHTTPServer
body, latency = sys.stdin.buffer.read(), float(sys.argv[1])
class Handler(BaseHTTPRequestHandler):
    protocol_version = "HTTP/1.1"
    disable_nagle_algorithm = True
    def do_GET(self):
        time.sleep(latency)
        self.send_response(200)
        self.send_header("Content-Type", "application/json")
        self.send_header("Content-Length", str(len(body)))
        self.end_headers()
        self.wfile.write(body)
    def log_message(self, *args):
        pass
server = ThreadingHTTPServer(("127.0.0.1", 0), Handler)
print(server.server_address[1], flush=True)
server.serve_forever()
"""


@contextmanager
def bare_server(body: bytes, latency_ms: int):
    """The bare server in its own process, answering `body`; yields its URL."""
    process = subprocess.Popen(
        [sys.executable, "-c", BARE_SERVER, str(latency_ms / 1000)],
        stdin=subprocess.PIPE,
        stdout=subprocess.PIPE,
    )
    try:
        assert process.stdin is not None and process.stdout is not None
        process.stdin.write(body)
        process.stdin.close()
        yield f"http://127.0.0.1:{int(process.stdout.readline())}"
    finally:
        process.kill()
        process.wait()


def sockets(url: str, survey_id: int, n: int, parallelism: int) -> float:
    """Seconds for n GETs over plain kept-alive connections, `parallelism` at a time."""
    parts = urlsplit(url)
    counts = [n // parallelism + (i < n % parallelism) for i in range(parallelism)]

    def reader(count: int) -> None:
        connection = http.client.HTTPConnection(parts.hostname, parts.port, timeout=30)
        for _ in range(count):
            connection.request("GET", f"/buyers/v2/surveys/{survey_id}", headers=HEADERS)
            json.loads(connection.getresponse().read())
        connection.close()

    threads = [threading.Thread(target=reader, args=(count,)) for count in counts]
    started = time.perf_counter()
    for thread in threads:
        thread.start()
    for thread in threads:
        thread.join()
    return time.perf_counter() - started


def client(url: str, survey_id: int, n: int, parallelism: int) -> float:
    """Seconds for n `ApiClient.get_survey` calls from a pool of `parallelism` threads."""
    api = ApiClient(url, TOKEN, pool_size=parallelism)
    api.get_survey(survey_id)  # the connection pool is not what is measured
    with ThreadPoolExecutor(parallelism) as pool:
        started = time.perf_counter()
        list(pool.map(api.get_survey, [survey_id] * n))
        elapsed = time.perf_counter() - started
    api.close()
    return elapsed


def report(name: str, runs: list[float], bound: float, n: int, args: argparse.Namespace) -> None:
    median = statistics.median(runs)
    shown = ", ".join(f"{run:.3f}s" for run in runs)
    print(
        f"N={n}, L={args.latency_ms} ms, P={args.parallelism}, {name}: {median:.3f}s "
        f"(median of {shown}); N x L / P = {bound:.2f}s; ratio {median / bound:.3f}"
    )


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--surveys", type=int, nargs="+", default=[200, 1000])
    parser.add_argument("--latency-ms", type=int, default=50)
    parser.add_argument("--parallelism", type=int, default=10)
    parser.add_argument("--repeat", type=int, default=3)
    args = parser.parse_args()
    print(f"load before: {os.getloadavg()[0]:.2f}")
    with tempfile.TemporaryDirectory() as tmp:
        with served(Path(tmp) / "sandbox.db", latency_ms=args.latency_ms) as sandbox:
            created = requests.post(
                sandbox.url + "/buyers/v2/surveys", json=SURVEY, headers=HEADERS, timeout=30
            )
            created.raise_for_status()
            survey_id = created.json()["ps_survey_id"]
            body = requests.get(
                f"{sandbox.url}/buyers/v2/surveys/{survey_id}", headers=HEADERS, timeout=30
            ).content
            ways: dict[str, tuple[str, Callable[[str, int, int, int], float]]] = {
                "sockets": (sandbox.url, sockets),
                "surveyctl's client": (sandbox.url, client),
            }
            with bare_server(body, args.latency_ms) as bare:
                ways = {"bare server": (bare, sockets), **ways}
                for n in args.surveys:
                    bound = n * args.latency_ms / 1000 / args.parallelism
                    for name, (url, way) in ways.items():
                        runs = [
                            way(url, survey_id, n, args.parallelism) for _ in range(args.repeat)
                        ]
                        report(name, runs, bound, n, args)


if __name__ == "__main__":
    main()
