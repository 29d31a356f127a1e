"""Progress of plan and apply on stderr: a bar on a terminal, one line per resource otherwise
(also in CI and on TERM=dumb: see console.redraws).

`Steps(verb)` is called once per finished step (a live body read, a write applied). On a
terminal it draws a transient rich bar, started at the first step so that it never sits under
a question; elsewhere (CI logs, pipes) it prints one line per step. `close()` removes the bar
before the plan or the summary is printed.
"""

from __future__ import annotations

import threading

import click

from surveyctl.cli.console import console, redraws
from surveyctl.render.values import printable


class Steps:
    """Progress of one phase: `step(label, done, total, detail)` per finished step."""

    def __init__(self, verb: str):
        self.verb = verb
        self.total = 0
        self._done = 0
        self._bar = None
        self._task = None
        self._closed = False
        self._lock = threading.Lock()
        # Made here, on the command's thread: steps may come from worker threads, which do not
        # see the command line's --no-color.
        self._redraws = redraws()
        self._console = console(stderr=True) if self._redraws else None

    def step(
        self, label: str, done: int | None = None, total: int | None = None, detail: str = ""
    ) -> None:
        with self._lock:
            self._done = done if done is not None else self._done + 1
            self.total = total if total is not None else max(self.total, self._done)
            # Ids and messages come from manifests in pull requests and from the service: a
            # right-to-left override or an escape sequence in one is shown, not acted on.
            label, detail = printable(label), printable(detail)
            if not self._redraws:
                text = f"{self.verb} {label} ({self._done}/{self.total})"
                try:
                    click.echo(f"{text}: {detail}" if detail else text, err=True)
                except OSError:
                    # stderr's reader went away (`2>&1 | head`): progress is a courtesy, and
                    # failing here would stop an apply between its writes.
                    pass
                return
            if self._closed:
                return
            if self._bar is None:
                self._start()
            self._bar.update(self._task, completed=self._done, total=self.total, label=label)

    def _start(self) -> None:
        from rich.progress import BarColumn, MofNCompleteColumn, Progress, TextColumn

        self._bar = Progress(
            TextColumn(self.verb),
            BarColumn(),
            MofNCompleteColumn(),
            TextColumn("{task.fields[label]}"),
            console=self._console,
            transient=True,
        )
        self._bar.start()
        self._task = self._bar.add_task(self.verb, total=self.total, label="")

    def missing(self) -> int:
        """How many of the steps counted in `total` never came (0 before the first step)."""
        with self._lock:
            return self.total - self._done

    def settle(self, label: str) -> None:
        """Counts the steps that never came as done, in one step named `label`."""
        if self.missing() > 0:
            self.step(label, done=self.total, total=self.total)

    def close(self) -> None:
        with self._lock:
            if self._bar is not None:
                self._bar.stop()
                self._bar = None
            self._closed = True


def settle_spared_reads(reading: Steps) -> None:
    """The reads a plan spared, as its last step: a survey the account's list shows unchanged
    since surveyctl last wrote or read it is not read again (reconcile/reads.py), and a CI log
    stopped at `read ... (9/27)`, as if 18 reads had been lost."""
    spared = reading.missing()
    if spared > 0:
        surveys = "1 survey" if spared == 1 else f"{spared} surveys"
        reading.settle(f"the survey list: {surveys} unchanged since surveyctl last saw them")
