"""Bottlerocket versions: the CRD's semver pattern and semver-correct comparison."""

from __future__ import annotations

import re
from functools import lru_cache
from typing import Annotated

import semver
from pydantic import StringConstraints

# semver.org's recommended expression, exactly as the CRD (and so the kube-apiserver) enforces it.
SEMVER_PATTERN = (
    r"^(0|[1-9]\d*)\.(0|[1-9]\d*)\.(0|[1-9]\d*)"
    r"(?:-((?:0|[1-9]\d*|\d*[a-zA-Z-][0-9a-zA-Z-]*)(?:\.(?:0|[1-9]\d*|\d*[a-zA-Z-][0-9a-zA-Z-]*))*))?"
    r"(?:\+([0-9a-zA-Z-]+(?:\.[0-9a-zA-Z-]+)*))?$"
)
_SEMVER = re.compile(SEMVER_PATTERN)

Version = Annotated[str, StringConstraints(pattern=SEMVER_PATTERN)]
"""A Bottlerocket version as it travels on the wire, e.g. `1.19.2`."""


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
    return semver.Version.parse(left).compare(right)


def versions_differ(left: str, right: str) -> bool:
    """True when the two versions are not of equal semver precedence."""
    return compare_versions(left, right) != 0
