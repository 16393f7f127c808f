"""Hypothesis strategies for what brupop reads from outside: arbitrary JSON (deep nesting,
wrong types, huge sizes) and arbitrary text (Unicode digits, control characters, lone
surrogates, huge strings), for the suites that prove every decoder refuses it with its own
typed error."""

from __future__ import annotations

from dataclasses import dataclass
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


def deeply_nested(depth: int = DEEP) -> list[Any]:
    """`depth` plain lists inside one another, `[[[...]]]`. Built in a loop: `json.loads`
    itself stops at about 1,000 levels, but a decoder of another kind (or a bug) may hand
    more."""
    nested: list[Any] = []
    for _ in range(depth - 1):
        nested = [nested]
    return nested


@dataclass(frozen=True)
class Deep:
    """Where `outside_json` puts deep nesting: `materialized` turns it into the lists. The
    examples hypothesis prints then show `Deep(depth=...)` (printing the lists themselves
    recurses too deep), while the decoder gets plain lists, as from a JSON decoder."""

    depth: int


def materialized(value: Any) -> Any:
    """`value` with every Deep replaced by that many nested lists."""
    if isinstance(value, Deep):
        return deeply_nested(value.depth)
    if isinstance(value, list):
        return [materialized(item) for item in value]
    if isinstance(value, dict):
        return {key: materialized(item) for key, item in value.items()}
    return value


def outside_json(max_leaves: int = 20, *, deep: bool = True) -> st.SearchStrategy[Any]:
    """Any JSON value: scalars of every type, containers of them, and (with `deep`) lists
    nested 100 to 10,000 deep, as Deep markers: pass the value through `materialized`."""
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
    if not deep:
        return tree
    nested = st.builds(Deep, st.integers(100, DEEP))
    return st.one_of(tree, nested, st.dictionaries(outside_text(16), nested, max_size=2))
