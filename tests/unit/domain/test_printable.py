"""printable: text from outside loses every terminal control before it is shown or written."""

from __future__ import annotations

import re

import pytest
from hypothesis import given, settings
from hypothesis import strategies as st

from brupop.domain.printable import ELLIPSIS, printable, printable_lines

# What must never survive: C0, DEL, C1, and the bidi embeddings, overrides and isolates.
FORBIDDEN = re.compile("[\x00-\x1f\x7f-\x9f\u202a-\u202e\u2066-\u2069]")


@pytest.mark.parametrize(
    ("hostile", "shown"),
    [
        ("\x1b]0;owned\x07HTTP 500", "HTTP 500"),  # window title
        ("\x1b]52;c;ZWNobyBoaQ==\x1b\\down", "down"),  # clipboard write (OSC 52)
        ("bad\r\x1b[2K\x1b[1Aall nodes healthy", "bad all nodes healthy"),  # overwrite a line
        ("\x1b[31mred\x1b[0m", "red"),
        ("\x1bPq#0;2;0;0;0\x1b\\sixel", "sixel"),  # DCS
        ("a\x9b31mb\x9dc", "a31mbc"),  # C1 introducers lose their meaning once removed
        ("admin\u202egnp.exe", "admingnp.exe"),  # a right-to-left override
        ("x\u2066y\u2069z", "xyz"),
        ("nul\x00bell\x07del\x7f", "nulbelldel"),
        ("two\nlines\tand\u2028more", "two lines and more"),
        ("ordinary text, ünïcode ✓", "ordinary text, ünïcode ✓"),
    ],
)
def test_terminal_controls_are_taken_out_and_the_text_kept(hostile: str, shown: str) -> None:
    assert printable(hostile) == shown


def test_a_limit_cuts_the_text_and_marks_the_cut() -> None:
    assert printable("x" * 500, 10) == "x" * 9 + ELLIPSIS
    assert printable("short", 10) == "short"


def test_a_huge_text_is_cut_without_being_read_whole() -> None:
    huge = "\x1b[1m" * 2_000_000 + "tail"

    assert len(printable(huge, 120)) <= 120


def test_printable_lines_keeps_the_line_breaks_only() -> None:
    assert printable_lines("one\x1b[2J\ntwo\r\n\x1b]0;t\x07three") == "one\ntwo \nthree"


@settings(max_examples=300, deadline=1000)
@given(st.text(max_size=400), st.one_of(st.none(), st.integers(min_value=1, max_value=300)))
def test_nothing_forbidden_survives_any_text(text: str, limit: int | None) -> None:
    clean = printable(text, limit)

    assert FORBIDDEN.search(clean) is None
    assert limit is None or len(clean) <= limit
    assert printable(clean) == clean
