"""The emulator's versions: semver.org's validation and the semver package's precedence (the
one brupop's domain uses)."""

from __future__ import annotations

from brupop.domain.versions import is_version as domain_is_version
from brupop.hostsim.versions import is_version, newer


def test_release_beats_its_pre_release_and_numbers_compare_numerically() -> None:
    assert newer("1.10.0", "1.9.0")
    assert newer("1.0.0", "1.0.0-rc.1")
    assert newer("1.0.0-rc.10", "1.0.0-rc.2")
    assert not newer("1.0.0", "1.0.0")
    assert not newer("1.0.0+build.2", "1.0.0+build.1"), "build metadata has no precedence"


def test_only_semantic_versions_are_versions() -> None:
    assert is_version("1.19.2") and is_version("1.20.0-rc.1+build.5")
    assert not is_version("latest") and not is_version("1.2") and not is_version("01.2.3")
    assert not is_version("1.0.0-01"), "a numeric pre-release part has no leading zero"


def test_the_emulator_accepts_exactly_the_versions_the_crd_accepts() -> None:
    samples = [
        "1.0.0",
        "1.0.0-01",
        "1.0.0-rc.1",
        "1.0.0-0a",
        "1.0.0+x.y",
        "1.0",
        "v1.0.0",
        "1.0.0-",
    ]
    assert [is_version(s) for s in samples] == [domain_is_version(s) for s in samples]
