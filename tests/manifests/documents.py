"""Hypothesis strategies of YAML documents: the mappings, lists and scalars manifests are
made of, with the plain texts YAML 1.1 reads otherwise than they show."""

from __future__ import annotations

from hypothesis import strategies as st

# Plain texts YAML 1.1 gives another meaning (true, false, octal, base 60, a float, null).
TRICKY_TEXTS = ["yes", "No", "on", "OFF", "017", "1_000", "1:30", "1e3", "-.5", "0o17", "~"]


def scalars(integers: st.SearchStrategy, floats: st.SearchStrategy) -> st.SearchStrategy:
    """Scalars of a document: None, booleans, the given numbers, short texts, tricky texts."""
    return st.one_of(
        st.none(),
        st.booleans(),
        integers,
        floats,
        st.text(max_size=12),
        st.sampled_from(TRICKY_TEXTS),
    )


def documents(leaves: st.SearchStrategy) -> st.SearchStrategy:
    """Top-level mappings of up to 5 keys whose values nest lists and mappings of `leaves`."""
    values = st.recursive(
        leaves,
        lambda inner: (
            st.lists(inner, max_size=4) | st.dictionaries(st.text(max_size=8), inner, max_size=4)
        ),
        max_leaves=30,
    )
    return st.dictionaries(st.text(max_size=8), values, max_size=5)
