"""The release-age quorum: how many nodes must report a version before its release age starts.

A node's report proves nothing about a release (an agent can claim any target version), so one
node must not start a version's age for the fleet: the age starts only when at least `needed`
nodes report the version as their target. By default that is 10 % of the opted-in nodes and
at least 2; never more than the fleet, so a fleet of one still moves.
"""

from __future__ import annotations

from collections.abc import Mapping
from dataclasses import dataclass, field

QUORUM_LEAST = 2
QUORUM_PERCENT = 10
QUORUM_MOST = 1_000_000
"""The largest quorum a setting may ask for: more nodes than any cluster holds."""


def quorum_needed(fleet: int, setting: int | None = None) -> int:
    """The nodes that must report a version in a fleet of `fleet` nodes: `setting` when given,
    else the default (10 % rounded up, at least 2); at most the fleet, at least 1."""
    wanted = (
        setting if setting is not None else max(QUORUM_LEAST, -(-fleet * QUORUM_PERCENT // 100))
    )
    return max(1, min(wanted, fleet))


@dataclass(frozen=True)
class VersionQuorum:
    """How many nodes report each version (as their target), and how many are needed."""

    needed: int
    reporting: Mapping[str, int] = field(default_factory=dict)

    @classmethod
    def of(
        cls, targets: Mapping[str, int], fleet: int, setting: int | None = None
    ) -> VersionQuorum:
        """The quorum of a fleet of `fleet` nodes over `targets` (nodes by target version)."""
        reporting = {version: count for version, count in targets.items() if count > 0}
        return cls(quorum_needed(fleet, setting), reporting)

    @property
    def visible(self) -> bool:
        """At least one node reports a version: the fleet can be judged (an empty view, such
        as a mirror not yet filled, says nothing about any version)."""
        return bool(self.reporting)

    def reached(self, version: str) -> bool:
        """Enough nodes report `version` for its release age to run."""
        return self.reporting.get(version, 0) >= self.needed

    def versions(self) -> list[str]:
        """The versions enough nodes report, by name."""
        return sorted(v for v, count in self.reporting.items() if count >= self.needed)

    def shortfall(self, version: str) -> str:
        """Why `version`'s release age has not started, as the REASON column says it."""
        count = self.reporting.get(version, 0)
        return (
            f"{version} offered by {count} of {self.needed} nodes needed to start its release age"
        )
