"""Bottlerocket versions: the CRD's semver pattern and semver-correct comparison.

Precedence is semver.org's rule 11 over this pattern's groups, not the `semver` package's:
that package imports its command line (argparse, gettext) with it, 0.4 MiB of the agent.
Plain `re`: the agent loads this module, and pydantic's `Version` field lives in `shadow`.
"""

from __future__ import annotations

import re
from functools import lru_cache

# semver.org's recommended expression, exactly as the CRD (and so the kube-apiserver) enforces it.
SEMVER_PATTERN = (
    r"^(0|[1-9]\d*)\.(0|[1-9]\d*)\.(0|[1-9]\d*)"
    r"(?:-((?:0|[1-9]\d*|\d*[a-zA-Z-][0-9a-zA-Z-]*)(?:\.(?:0|[1-9]\d*|\d*[a-zA-Z-][0-9a-zA-Z-]*))*))?"
    r"(?:\+([0-9a-zA-Z-]+(?:\.[0-9a-zA-Z-]+)*))?$"
)
_SEMVER = re.compile(SEMVER_PATTERN)


def is_version(text: str) -> bool:
    """True when `text` is a semantic version the CRD accepts."""
    return isinstance(text, str) and _SEMVER.match(text) is not None


def compare_versions(left: str, right: str) -> int:
    """-1, 0 or 1 by semver precedence (pre-releases sort before their release)."""
    if left == right:
        return 0
    return _compare(left, right)


@lru_cache(maxsize=4096)
def _compare(left: str, right: str) -> int:
    """A fleet runs a handful of versions, and the controller compares them for every node on
    every pass: each distinct pair is parsed and compared once (a ValueError is not kept)."""
    mine, theirs = _precedence(left), _precedence(right)
    return (mine > theirs) - (mine < theirs)


_Identifier = tuple[int, int, str]


def _precedence(text: str) -> tuple[tuple[int, int, int], int, tuple[_Identifier, ...]]:
    """A key that orders versions by semver precedence; ValueError when `text` is not one.

    Major, minor, patch numerically; a pre-release before its release; pre-release
    identifiers one by one, numeric ones numerically and before alphanumeric ones, which
    compare as ASCII text; more identifiers after fewer equal ones. Build metadata is ignored.
    """
    match = _SEMVER.match(text) if isinstance(text, str) else None
    if match is None:
        raise ValueError(f"{text!r} is not a semantic version")
    major, minor, patch, pre_release = match.group(1, 2, 3, 4)
    release = (int(major), int(minor), int(patch))
    if pre_release is None:
        return release, 1, ()
    identifiers = tuple(
        (0, int(part), "") if part.isascii() and part.isdigit() else (1, 0, part)
        for part in pre_release.split(".")
    )
    return release, 0, identifiers


def versions_differ(left: str, right: str) -> bool:
    """True when the two versions are not of equal semver precedence."""
    return compare_versions(left, right) != 0
