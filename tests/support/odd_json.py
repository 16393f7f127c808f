"""Hypothesis strategies for answers a hostile or broken server may give: arbitrary JSON with
wrong types, text with controls and Unicode digits, deep nesting, and raw bytes."""

from __future__ import annotations

from hypothesis import strategies as st

# Text that tries what a terminal or a parser may trip on.
odd_text = st.text(max_size=60) | st.sampled_from(
    ["\x1b]0;t\x07", "\x1b]52;c;eA==\x07", "\r\x1b[2K", "\u202e", "\x9b", "²", "٣", "", "1e999"]
)
scalars = (
    st.none()
    | st.booleans()
    | st.integers(min_value=-(2**70), max_value=2**70)
    | st.floats(allow_nan=True, allow_infinity=True)
    | odd_text
)
json_values = st.recursive(
    scalars,
    lambda inner: st.lists(inner, max_size=5) | st.dictionaries(odd_text, inner, max_size=5),
    max_leaves=25,
)


def nested(depth: int, kind: str = "[") -> bytes:
    """A JSON text nested `depth` deep (lists or objects), far past any recursion limit."""
    if kind == "[":
        return b"[" * depth + b"]" * depth
    return b'{"a":' * depth + b"1" + b"}" * depth


deep_json = st.sampled_from([nested(100_000), nested(100_000, "{"), nested(5000)])
raw_bytes = st.binary(max_size=300)
