"""Paged reads one page ahead: order kept, errors where they happened, two pages at most."""

from __future__ import annotations

import threading

import pytest

from surveyctl.api.read_ahead import read_ahead


class Source:
    """Numbers 1..count; counts how many were made and raises at `fail_at`."""

    def __init__(self, count: int, fail_at: int | None = None):
        self.count, self.fail_at = count, fail_at
        self.made = 0
        self.lock = threading.Lock()

    def __iter__(self):
        for number in range(1, self.count + 1):
            if number == self.fail_at:
                raise RuntimeError(f"page {number} failed")
            with self.lock:
                self.made += 1
            yield number


def test_items_arrive_in_order():
    assert list(read_ahead(iter(Source(50)))) == list(range(1, 51))


def test_no_more_than_one_item_is_made_ahead_of_the_caller():
    source = Source(20)
    ahead = []
    for taken, _item in enumerate(read_ahead(iter(source)), start=1):
        threading.Event().wait(0.002)  # the producer has time to run ahead if it could
        ahead.append(source.made - taken)
    assert max(ahead) <= 1


def test_the_next_item_is_made_while_the_caller_works_on_this_one():
    second_made = threading.Event()

    def source():
        yield 1
        second_made.set()
        yield 2

    items = read_ahead(source())
    assert next(items) == 1
    assert second_made.wait(timeout=5)  # the caller has not asked for item 2 yet
    assert list(items) == [2]


def test_an_error_of_the_source_is_raised_after_the_items_before_it():
    got = []
    with pytest.raises(RuntimeError, match="page 4 failed"):
        for item in read_ahead(iter(Source(10, fail_at=4))):
            got.append(item)
    assert got == [1, 2, 3]


def test_a_caller_that_stops_early_stops_the_source():
    source = Source(1000)
    items = read_ahead(iter(source))
    assert next(items) == 1
    items.close()
    threading.Event().wait(0.05)
    assert source.made <= 3
