"""What flushing an output file to disk costs: `files.write_atomically` with and without
`durable=True`, for files the size of a saved plan (55 kB: 10 surveys of 10 quotas; 1 MB: the
plan of 250 quota changes) and of a CSV export of 100,000 transactions (72 MB).

Writes into a temporary folder beside the given one (default: the system's temporary folder;
name a folder on the disk that matters, since tmpfs flushes nothing), alternating the two
kinds so that a change of load falls on both, and prints the median and the largest time of
each. The difference is the wall time `plan --out`, an export, `import --out` or `init` gain
per file; it is not CPU time.

    python benchmarks/durable_writes.py [--folder DIR] [--repeats 20]
"""

from __future__ import annotations

import argparse
import shutil
import statistics
import tempfile
import time
from pathlib import Path

from surveyctl.files import write_atomically

SIZES = {"plan of 10 surveys": 55_000, "plan of 250 quota changes": 1_000_000}
EXPORT = ("export of 100,000 transactions", 72_000_000)


def _times(folder: Path, size: int, repeats: int) -> dict[bool, list[float]]:
    text = "x" * (size - 1) + "\n"
    times: dict[bool, list[float]] = {False: [], True: []}
    for _ in range(repeats):
        for durable in (False, True):
            began = time.perf_counter()
            write_atomically(folder / "output", text, durable=durable)
            times[durable].append(time.perf_counter() - began)
    return times


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--folder", type=Path, default=None)
    parser.add_argument("--repeats", type=int, default=20)
    args = parser.parse_args()
    folder = Path(tempfile.mkdtemp(prefix="surveyctl-durable-", dir=args.folder))
    try:
        # The large file fewer times: each write of it takes a tenth of a second or more.
        runs = [(name, size, args.repeats) for name, size in SIZES.items()]
        runs.append((*EXPORT, max(3, args.repeats // 4)))
        for name, size, repeats in runs:
            times = _times(folder, size, repeats)
            shown = ", ".join(
                f"{'durable' if durable else 'not durable'} median "
                f"{statistics.median(values) * 1000:.2f} ms (largest {max(values) * 1000:.2f})"
                for durable, values in times.items()
            )
            print(f"{name} ({size / 1e6:g} MB, {repeats} writes each): {shown}")
    finally:
        shutil.rmtree(folder, ignore_errors=True)


if __name__ == "__main__":
    main()
