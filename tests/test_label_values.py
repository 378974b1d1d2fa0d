"""as_labels' shortcuts give what its per-item check gives, types included.

The second implementation is ``_plain``, the per-item check every label went through before
the shortcuts for exact strings and numpy's strings.
"""

from __future__ import annotations

import math

import numpy as np
import pytest
from hypothesis import given
from hypothesis import strategies as st

from evalkit.stats._labels import _plain, as_labels

_VALUES = st.one_of(
    st.text(max_size=4),
    st.text(max_size=4).map(np.str_),
    st.none(),
    st.integers(-3, 3),
    st.sampled_from([math.nan, np.float64("nan"), np.int64(2), True]),
)


@given(st.lists(_VALUES, max_size=8))
def test_the_shortcuts_agree_with_the_per_item_check(values: list[object]) -> None:
    got = as_labels(values, "labels")
    want = [_plain(v, "labels", i) for i, v in enumerate(values)]
    assert [(type(v), v) for v in got] == [(type(v), v) for v in want]


@pytest.mark.parametrize("labels", [["a", None, "b"], [np.str_("a"), None, "b"]])
def test_plain_and_numpy_strings_come_back_as_str(labels: list[object]) -> None:
    got = as_labels(labels, "labels")
    assert got == ["a", None, "b"] and [type(v) for v in got] == [str, type(None), str]
    assert got is not labels  # a new list: the caller's is never handed back to be changed
