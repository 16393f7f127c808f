"""The emulator's stdlib semver ordering agrees with the domain's (semver package)."""

from __future__ import annotations

from hypothesis import given, settings
from hypothesis import strategies as st

from brupop.domain.versions import compare_versions
from brupop.hostsim.versions import is_version, newer

_IDENT = st.sampled_from(["rc", "alpha", "beta", "1", "2", "10", "x-y"])
_VERSIONS = st.builds(
    lambda major, minor, patch, pre: f"{major}.{minor}.{patch}" + (f"-{pre}" if pre else ""),
    st.integers(0, 3),
    st.integers(0, 3),
    st.integers(0, 12),
    st.none() | st.lists(_IDENT, min_size=1, max_size=3).map(".".join),
)


def test_release_beats_its_pre_release_and_numbers_compare_numerically() -> None:
    assert newer("1.10.0", "1.9.0")
    assert newer("1.0.0", "1.0.0-rc.1")
    assert newer("1.0.0-rc.10", "1.0.0-rc.2")
    assert not newer("1.0.0", "1.0.0")


def test_only_semantic_versions_are_versions() -> None:
    assert is_version("1.19.2") and is_version("1.20.0-rc.1+build.5")
    assert not is_version("latest") and not is_version("1.2") and not is_version("01.2.3")


@settings(max_examples=300)
@given(_VERSIONS, _VERSIONS)
def test_ordering_matches_the_semver_package(left: str, right: str) -> None:
    assert newer(left, right) == (compare_versions(left, right) > 0)
