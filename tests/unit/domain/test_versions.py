"""Version precedence: semver.org's rule 11, the same answers as the `semver` package gives."""

from __future__ import annotations

from itertools import pairwise

import pytest
import semver
from hypothesis import assume, given, settings
from hypothesis import strategies as st

from brupop.domain.versions import compare_versions, is_version, versions_differ

# semver.org's own example, lowest first.
SEMVER_ORG_ORDER = [
    "1.0.0-alpha",
    "1.0.0-alpha.1",
    "1.0.0-alpha.beta",
    "1.0.0-beta",
    "1.0.0-beta.2",
    "1.0.0-beta.11",
    "1.0.0-rc.1",
    "1.0.0",
    "1.0.1",
    "1.1.0",
    "1.10.0",
    "2.0.0",
]

_IDENTIFIER = st.one_of(
    st.integers(0, 30).map(str), st.from_regex(r"[0-9a-zA-Z-]{1,4}", fullmatch=True)
)
_VERSION = st.builds(
    lambda core, pre, build: (
        ".".join(map(str, core)) + ("-" + ".".join(pre) if pre else "") + build
    ),
    st.tuples(st.integers(0, 12), st.integers(0, 12), st.integers(0, 12)),
    st.lists(_IDENTIFIER, max_size=3),
    st.sampled_from(["", "+build.7", "+x-y"]),
)


@pytest.mark.parametrize(("lower", "higher"), list(pairwise(SEMVER_ORG_ORDER)))
def test_versions_follow_semver_org_precedence(lower: str, higher: str) -> None:
    assert compare_versions(lower, higher) == -1
    assert compare_versions(higher, lower) == 1


def test_build_metadata_does_not_change_precedence() -> None:
    assert compare_versions("1.2.3+build.1", "1.2.3+build.2") == 0
    assert not versions_differ("1.2.3", "1.2.3+meta")


@pytest.mark.parametrize("text", ["1.2", "v1.2.3", "01.2.3", "1.2.3-", "1.2.3-01", ""])
def test_a_text_that_is_no_version_is_refused_with_a_value_error(text: str) -> None:
    with pytest.raises(ValueError, match="is not a semantic version"):
        compare_versions(text, "1.2.3")


@settings(max_examples=500)
@given(_VERSION, _VERSION)
def test_precedence_agrees_with_the_semver_package(left: str, right: str) -> None:
    assume(is_version(left) and is_version(right))  # a pre-release like `01` is no version
    assert compare_versions(left, right) == semver.Version.parse(left).compare(right)
