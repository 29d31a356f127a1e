"""The sandbox in a process of its own, as a marketplace is, for benchmarks and tests whose
client must not share an interpreter (and its lock) with the server.

```python
with served(tmp / "sandbox.db", latency_ms=50) as sandbox:
    ApiClient(sandbox.url, "sandbox-buyer-1").get_survey(10001)
```
`surveyctl sandbox serve --port 0` picks a free port and says which on its first line; the
process is stopped with SIGINT (as Ctrl-C would) when the block ends.
"""

from __future__ import annotations

import re
import signal
import subprocess
import sys
from collections.abc import Iterator
from contextlib import contextmanager
from dataclasses import dataclass
from pathlib import Path

_URL = re.compile(r"http://127\.0\.0\.1:\d+")


@dataclass(frozen=True)
class ServedSandbox:
    """A running `surveyctl sandbox serve`: its root URL and its process."""

    url: str
    process: subprocess.Popen

    @property
    def pid(self) -> int:
        return self.process.pid


@contextmanager
def served(
    db_path: Path,
    *,
    latency_ms: int = 0,
    fail_rate: float = 0.0,
    seed: int | None = None,
    extra_args: tuple[str, ...] = (),
) -> Iterator[ServedSandbox]:
    """Serves the sandbox over `db_path` in a new process for the block."""
    command = [sys.executable, "-m", "surveyctl", "sandbox", "serve", "--port", "0"]
    command += ["--db", str(db_path), "--latency-ms", str(latency_ms)]
    if fail_rate:
        command += ["--fail-rate", str(fail_rate)]
    if seed is not None:
        command += ["--seed", str(seed)]
    process = subprocess.Popen(
        [*command, *extra_args], stdout=subprocess.PIPE, stderr=subprocess.DEVNULL, text=True
    )
    try:
        url = _announced_url(process)
        yield ServedSandbox(url, process)
    finally:
        _stop(process)


def _announced_url(process: subprocess.Popen) -> str:
    assert process.stdout is not None
    for line in process.stdout:
        found = _URL.search(line)
        if found:
            return found.group(0)
    raise RuntimeError(f"the sandbox did not start (exit code {process.wait()})")


def _stop(process: subprocess.Popen) -> None:
    if process.poll() is None:
        process.send_signal(signal.SIGINT)
        try:
            process.wait(timeout=10)
        except subprocess.TimeoutExpired:
            process.kill()
            process.wait()
    if process.stdout is not None:
        process.stdout.close()
