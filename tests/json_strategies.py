"""Hypothesis strategies for JSON values: one recursive shape, the leaves each test needs."""

from __future__ import annotations

from typing import Any

from hypothesis import strategies as st


def json_values(leaves: st.SearchStrategy[Any]) -> st.SearchStrategy[Any]:
    """``leaves``, and lists and objects of them nested a few levels (at most 20 leaves)."""
    return st.recursive(
        leaves,
        lambda inner: (
            st.lists(inner, max_size=4) | st.dictionaries(st.text(max_size=4), inner, max_size=4)
        ),
        max_leaves=20,
    )
