"""Hypothesis strategies for what an outside party may send: any JSON, and JSON shaped like
the object a decoder expects but with any value in any field."""

from __future__ import annotations

from collections.abc import Mapping
from typing import Any

from hypothesis import strategies as st

ODD_TEXT = st.sampled_from(
    ["", "²", "٣", "10.0.0.9:8080", "\x1b]0;owned\x07", "\u202e", "a" * 5000, "50%", "-1", "NaN"]
)
SCALARS = (
    st.none()
    | st.booleans()
    | st.integers(min_value=-(2**70), max_value=2**70)
    | st.floats(allow_nan=True, allow_infinity=True)
    | st.text(max_size=20)
    | ODD_TEXT
)
JSON_VALUES = st.recursive(
    SCALARS,
    lambda inner: (
        st.lists(inner, max_size=4) | st.dictionaries(st.text(max_size=8), inner, max_size=4)
    ),
    max_leaves=20,
)


def shaped_like(shape: Mapping[str, Any]) -> st.SearchStrategy[dict[str, Any]]:
    """Objects with (some of) the keys of `shape`; a key maps to a nested shape, or to any
    JSON value when its shape is None."""
    fields = {
        key: (shaped_like(sub) | JSON_VALUES) if isinstance(sub, Mapping) else JSON_VALUES
        for key, sub in shape.items()
    }
    return st.fixed_dictionaries({}, optional=fields)
