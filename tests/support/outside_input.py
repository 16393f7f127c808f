"""Hypothesis strategies for what brupop reads from outside: arbitrary JSON (deep nesting,
wrong types, huge sizes) and arbitrary text (Unicode digits, control characters, lone
surrogates, huge strings), for the suites that prove every decoder refuses it with its own
typed error."""

from __future__ import annotations

import json
from typing import Any

from hypothesis import strategies as st

DEEP = 10_000
# Digits `str.isdigit()` takes: superscripts (`int()` refuses them), Arabic-Indic, Devanagari,
# Bengali, Thai, NKo, fullwidth and mathematical ones (`int()` takes those).
UNICODE_DIGITS = (
    "²³\u00b9\u0660\u0661\u0662\u0969\u096a\u09eb\u0e56\u07c0\uff10\uff19\U0001d7ce\U0001d7d7"
)
CONTROL = "".join(chr(c) for c in (*range(0x20), 0x7F, 0x85, 0x2028, 0x2029, 0x202E, 0xFEFF))
_TRICKY = UNICODE_DIGITS + CONTROL + "0123456789-*/,?@\"'\\(){}[]|^$.+:=~! \t"


def outside_text(max_size: int = 64) -> st.SearchStrategy[str]:
    """Any text: mostly short and full of digits, signs and control characters, sometimes
    huge, sometimes with lone surrogates (JSON can carry them)."""
    tricky = st.text(alphabet=st.sampled_from(_TRICKY), max_size=max_size)
    anything = st.text(max_size=max_size)
    huge = st.builds(
        lambda char, count: char * count, st.sampled_from(_TRICKY), st.integers(1, 200_000)
    )
    return st.one_of(tricky, anything, huge)


def environment_text(max_size: int = 64) -> st.SearchStrategy[str]:
    """Text an environment variable can hold: anything but NUL, and undecodable bytes as the
    surrogate escapes Python reads them as."""
    raw_bytes = st.binary(max_size=max_size).map(lambda raw: raw.decode("utf-8", "surrogateescape"))
    plain = outside_text(max_size).filter(lambda text: _encodable(text))
    return st.one_of(plain, raw_bytes).map(lambda text: text.replace("\x00", ""))


def _encodable(text: str) -> bool:
    try:
        text.encode("utf-8", "surrogateescape")
    except UnicodeEncodeError:
        return False
    return True


def deeply_nested(depth: int = DEEP) -> Any:
    """`depth` lists inside one another, as `json.loads` builds them from `[[[...]]]`."""
    return json.loads("[" * depth + "]" * depth)


def outside_json(max_leaves: int = 20) -> st.SearchStrategy[Any]:
    """Any JSON value: scalars of every type, containers of them, and deep nesting."""
    scalars = st.one_of(
        st.none(),
        st.booleans(),
        st.integers(),
        st.integers(min_value=-(10**400), max_value=10**400),
        st.floats(allow_nan=True, allow_infinity=True),
        outside_text(),
    )
    tree = st.recursive(
        scalars,
        lambda inner: st.one_of(
            st.lists(inner, max_size=5), st.dictionaries(outside_text(16), inner, max_size=5)
        ),
        max_leaves=max_leaves,
    )
    deep = st.integers(100, DEEP).map(deeply_nested)
    return st.one_of(tree, deep)
