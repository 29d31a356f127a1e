"""Reading an iterator one item ahead, in a background thread.

A paged read spends most of its time waiting for the next page while the caller writes the
current one; `read_ahead` fetches page N+1 while the caller works on page N. No more than two
items exist at once (the caller's and the next), so memory stays flat.
"""

from __future__ import annotations

import queue
import threading
from collections.abc import Iterator
from typing import TypeVar

T = TypeVar("T")

_END = object()


def read_ahead(items: Iterator[T]) -> Iterator[T]:
    """The items of `items` in order, each one produced while the caller works on the one
    before. An exception raised by `items` is raised to the caller where that item would have
    come. A caller that stops early stops the producer after the item it is producing."""
    produced: queue.SimpleQueue[tuple[object, BaseException | None]] = queue.SimpleQueue()
    credit = threading.Semaphore(1)  # items the producer may make before the caller takes one
    stopped = threading.Event()

    def produce() -> None:
        try:
            while True:
                credit.acquire()
                if stopped.is_set():
                    return
                item = next(items, _END)
                produced.put((item, None))
                if item is _END:
                    return
        except BaseException as exc:  # handed to the caller's thread
            produced.put((_END, exc))

    threading.Thread(target=produce, name="surveyctl-read-ahead", daemon=True).start()
    try:
        while True:
            item, error = produced.get()
            if error is not None:
                raise error
            if item is _END:
                return
            credit.release()  # the next item is made while the caller works on this one
            yield item  # type: ignore[misc]
    finally:
        stopped.set()
        credit.release()
