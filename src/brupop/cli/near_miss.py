"""Suggestions for a mistyped word (a command, a flag, a choice): the closest known word, as
difflib finds it, so that `--max-concurrent unlimted` answers "did you mean 'unlimited'?"."""

from __future__ import annotations

from collections.abc import Iterable

_CUTOFF = 0.75  # close enough to be a typo, far enough that "10" does not suggest "unlimited"


def closest(word: str, known: Iterable[str]) -> str | None:
    """The known word `word` was most likely meant to be; None when none is close."""
    # Imported on a mistake only: difflib (with heapq) costs every agent start about 2 ms of CPU.
    import difflib

    matches = difflib.get_close_matches(word, list(known), n=1, cutoff=_CUTOFF)
    return matches[0] if matches else None


def did_you_mean(word: str, known: Iterable[str]) -> str:
    """`; did you mean 'x'?` to append to an error, or "" when no known word is close."""
    match = closest(word, known)
    return f"; did you mean {match!r}?" if match is not None else ""
