"""Requests per second of the sandbox: GET /surveys/{id} (12 quotas), server in its own process.

Starts `python -m surveyctl sandbox serve --port 0` on a temporary database (no latency, no
faults), creates one survey with 12 quotas, then loads it from client processes outside the
server: each process holds one keep-alive connection on loopback and sends GETs one after
another for a fixed time (a connection the server closes is reopened and counted). The client
is plain sockets with the request bytes built once, so it costs the machine as little CPU as
possible and the figure is the server's.

Prints requests per second, latency percentiles, and the server's CPU per 1,000 requests (from
/proc/<pid>/stat over the measured window), which is what the server would sustain per core on
a machine where the client does not compete with it: 1,000 / that figure x 1,000 req/s.

    python benchmarks/sandbox_rps.py [--connections 4] [--seconds 10] [--serve-arg=--threads=8]
"""

from __future__ import annotations

import argparse
import multiprocessing
import os
import re
import signal
import socket
import statistics
import subprocess
import sys
import tempfile
import time
from pathlib import Path
from urllib.parse import urlsplit

import requests

TOKEN = "sandbox-buyer-1"
HEADERS = {"access-token": TOKEN}
SURVEY = {
    "survey_title": "Benchmark",
    "survey_category_code": 231,
    "survey_localization": "en_US",
    "completes_required": 1200,
    "expected_ir": 40,
    "expected_loi": 12,
    "live_url": "https://survey.example.com/s?tid=[%%transaction_id%%]",
    "field_time": 14,
    "qualifications": [{"qualification_code": 211, "condition_codes": ["111", "112"]}],
    "quotas": [
        {
            "buyer_quota_id": f"cell-{n}",
            "required_count": 100,
            "criteria": [{"qualification_code": 211, "condition_codes": [str(111 + n % 2)]}],
        }
        for n in range(12)
    ],
}


class Served:
    """`surveyctl sandbox serve` in a process of its own, on a free loopback port."""

    def __init__(self, db: Path, extra: list[str]):
        command = [sys.executable, "-m", "surveyctl", "sandbox", "serve", "--port", "0"]
        self.command = [*command, "--db", str(db), *extra]
        self.process = subprocess.Popen(
            self.command, stdout=subprocess.PIPE, stderr=subprocess.PIPE, text=True
        )
        first = self.process.stdout.readline()
        found = re.search(r"http://[\w.]+:\d+", first)
        if not found:
            raise SystemExit(f"the sandbox did not start: {first}{self.process.stderr.read()}")
        self.url = found.group(0)

    def cpu_seconds(self) -> float | None:
        """User + system CPU of the server process so far (None where /proc is missing)."""
        try:
            fields = Path(f"/proc/{self.process.pid}/stat").read_text().rsplit(")", 1)[1].split()
        except OSError:
            return None
        return (int(fields[11]) + int(fields[12])) / os.sysconf("SC_CLK_TCK")

    def stop(self) -> None:
        self.process.send_signal(signal.SIGINT)
        try:
            self.process.wait(timeout=10)
        except subprocess.TimeoutExpired:
            self.process.kill()
            self.process.wait()


def _read_response(sock: socket.socket, buffer: bytearray) -> tuple[int, bool]:
    """Reads one response off a keep-alive socket; returns its status and whether the server
    closes the connection after it. Leftover bytes stay in `buffer`."""
    while (end := buffer.find(b"\r\n\r\n")) < 0:
        chunk = sock.recv(65536)
        if not chunk:
            raise ConnectionError("closed before the headers")
        buffer += chunk
    head = bytes(buffer[:end]).decode("latin-1").lower()
    status = int(head[9:12])
    length = int(re.search(r"\ncontent-length: *(\d+)", head).group(1))
    closes = "\nconnection: close" in head
    total = end + 4 + length
    while len(buffer) < total:
        chunk = sock.recv(65536)
        if not chunk:
            raise ConnectionError("closed inside the body")
        buffer += chunk
    del buffer[:total]
    return status, closes


def _client(url: str, path: str, start_at: float, stop_at: float, results) -> None:
    """One connection sending GETs back to back between `start_at` and `stop_at`."""
    parts = urlsplit(url)
    address = (parts.hostname, parts.port)
    request = (
        f"GET {path} HTTP/1.1\r\nHost: {parts.netloc}\r\naccess-token: {TOKEN}\r\n"
        "Accept: application/json\r\n\r\n"
    ).encode()
    latencies: list[float] = []
    errors = reconnects = 0
    sock: socket.socket | None = None
    buffer = bytearray()
    while time.time() < start_at:
        time.sleep(0.001)
    clock = time.perf_counter
    cpu_began = time.process_time()
    while time.time() < stop_at:
        if sock is None:
            sock = socket.create_connection(address, timeout=30)
            sock.setsockopt(socket.IPPROTO_TCP, socket.TCP_NODELAY, 1)
            buffer.clear()
            reconnects += 1
        began = clock()
        try:
            sock.sendall(request)
            status, closes = _read_response(sock, buffer)
        except OSError:
            errors += 1
            sock.close()
            sock = None
            continue
        latencies.append(clock() - began)
        if status != 200:
            errors += 1
        if closes:
            sock.close()
            sock = None
    if sock is not None:
        sock.close()
    results.put((latencies, errors, reconnects - 1, time.process_time() - cpu_began))


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--connections", type=int, default=4, help="client processes")
    parser.add_argument("--seconds", type=float, default=10.0, help="length of the measurement")
    parser.add_argument(
        "--serve-arg",
        action="append",
        default=[],
        help="an extra option of `sandbox serve`, e.g. --serve-arg=--threads=8 (repeatable)",
    )
    args = parser.parse_args()

    with tempfile.TemporaryDirectory() as folder:
        server = Served(Path(folder) / "bench.db", args.serve_arg)
        try:
            created = requests.post(
                server.url + "/buyers/v2/surveys", json=SURVEY, headers=HEADERS, timeout=30
            )
            created.raise_for_status()
            path = f"/buyers/v2/surveys/{created.json()['ps_survey_id']}"
            for _ in range(50):  # warm the server's caches and connection pool
                requests.get(server.url + path, headers=HEADERS, timeout=30).raise_for_status()
            context = multiprocessing.get_context("spawn")
            results = context.Queue()
            start_at = time.time() + 2.0  # every client process started and connected
            stop_at = start_at + args.seconds
            clients = [
                context.Process(target=_client, args=(server.url, path, start_at, stop_at, results))
                for _ in range(args.connections)
            ]
            for client in clients:
                client.start()
            while time.time() < start_at:
                time.sleep(0.001)
            cpu_before = server.cpu_seconds()
            collected = [results.get(timeout=args.seconds + 60) for _ in clients]
            cpu_after = server.cpu_seconds()
            for client in clients:
                client.join()
        finally:
            server.stop()

    latencies = [value for result in collected for value in result[0]]
    errors = sum(result[1] for result in collected)
    reconnects = sum(result[2] for result in collected)
    done = len(latencies)
    cuts = statistics.quantiles(latencies, n=100)
    serve = ["python -m surveyctl sandbox serve --port 0 --db …", *args.serve_arg]
    print(f"server: {' '.join(serve)}")
    print(
        f"client: {args.connections} processes x 1 keep-alive connection, loopback, "
        f"{args.seconds:.0f} s, {os.cpu_count()} cores"
    )
    print(f"GET /buyers/v2/surveys/{{id}} (12 quotas): {done} requests, {errors} errors, "
          f"{reconnects} reconnects")  # fmt: skip
    print(f"requests per second: {done / args.seconds:,.0f}")
    print(
        f"latency p50 {cuts[49] * 1000:.2f} ms, p90 {cuts[89] * 1000:.2f} ms, "
        f"p99 {cuts[98] * 1000:.2f} ms"
    )
    if cpu_before is not None and cpu_after is not None and done:
        per_thousand = (cpu_after - cpu_before) / done * 1000
        print(
            f"server CPU: {per_thousand:.3f} s per 1,000 requests "
            f"(one core alone would serve {1000 / per_thousand:,.0f} req/s)"
        )
    client_cpu = sum(result[3] for result in collected)
    print(f"client CPU: {client_cpu / done * 1000:.3f} s per 1,000 requests (all processes)")


if __name__ == "__main__":
    main()
