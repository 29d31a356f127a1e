"""The cycle collector is paused while many long-lived objects are built, given back as it was
found, and does not walk those objects again in its next young collections."""

from __future__ import annotations

import gc
import weakref

import pytest

from surveyctl.memory import collector_paused


class Node:
    """A small object that can be part of a reference cycle and be watched by a weakref."""

    def __init__(self) -> None:
        self.other: Node | None = None


@pytest.fixture
def collector_on():
    was = gc.isenabled()
    gc.enable()
    yield
    if not was:
        gc.disable()


def test_the_collector_is_paused_inside_and_given_back_after(collector_on):
    with collector_paused():
        assert not gc.isenabled()
    assert gc.isenabled()


def test_a_collector_that_was_off_stays_off(collector_on):
    gc.disable()
    with collector_paused():
        pass
    assert not gc.isenabled()


def test_a_nested_pause_does_not_give_the_collector_back_early(collector_on):
    with collector_paused():
        with collector_paused():
            pass
        assert not gc.isenabled()
    assert gc.isenabled()


def test_what_the_pause_built_is_not_walked_by_the_next_young_collection(collector_on):
    with collector_paused():
        built = [{"n": [index]} for index in range(2_000)]

    young = {id(o) for o in gc.get_objects(generation=0)}
    oldest = {id(o) for o in gc.get_objects(generation=2)}
    assert not any(id(item) in young for item in built)
    assert all(id(item) in oldest for item in built)


def test_a_cycle_made_during_the_pause_is_still_collected(collector_on):
    with collector_paused():
        first, second = Node(), Node()
        first.other, second.other = second, first
        watched = weakref.ref(first)
        del first, second

    gc.collect()

    assert watched() is None


def test_objects_frozen_by_someone_else_stay_frozen(collector_on):
    kept = {"frozen": True}
    gc.freeze()
    try:
        with collector_paused():
            pass
        tracked = {id(o) for generation in range(3) for o in gc.get_objects(generation)}
        assert gc.get_freeze_count() > 0 and id(kept) not in tracked
    finally:
        gc.unfreeze()
