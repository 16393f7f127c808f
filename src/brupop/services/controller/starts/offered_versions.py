"""OfferedVersions: when each version hosts are offered was first seen, across restarts.

Each pass, with the `default` policy object present, it merges the first-seen times that the
object's status shows (written by this or an earlier leader) with the ones this replica noted,
then keeps and notes the versions a quorum of nodes is offered now (`versions_first_seen`,
`release_quorum`: `quorum` nodes when set, else the default share of the fleet). The leader
writes the result back with the policy status, so a restarted controller or a new leader starts
from it. Without a policy object nothing is tracked, and the version gate holds nothing.
"""

from __future__ import annotations

from collections.abc import Mapping
from datetime import datetime

from brupop.domain.policy.scheduling_policy import VersionSpec
from brupop.domain.policy.update_policy_status import UpdatePolicyStatus
from brupop.domain.starting.release_quorum import VersionQuorum
from brupop.domain.starting.version_gate import VersionGate, VersionStanding, version_standings
from brupop.domain.starting.versions_first_seen import (
    VersionsSeen,
    first_seen_times,
    merge_seen,
    note_at_quorum,
)


class OfferedVersions:
    """This replica's record of first-seen times, and the version gate over it."""

    def __init__(self, quorum: int | None = None) -> None:
        self.seen: VersionsSeen = ()
        self._setting = quorum  # RELEASE_AGE_QUORUM; None: the default share of the fleet
        self._quorum: VersionQuorum | None = None  # who reported what in the last pass
        self._shown: VersionsSeen | None = None  # the status's record last merged
        self._times: Mapping[str, datetime] = {}

    def follow(
        self,
        status: UpdatePolicyStatus | None,
        *,
        present: bool,
        offered: Mapping[str, int],
        fleet: int,
        now: datetime,
    ) -> None:
        """Merge what the policy status shows (once per change of it) and keep or note the
        versions a quorum of the `fleet` nodes is `offered` now (nodes by target version);
        forget everything when there is no policy object (`present` False)."""
        seen = self.seen
        if not present:
            seen, self._shown, self._quorum = (), None, None
        else:
            quorum = self._quorum = VersionQuorum.of(offered, fleet, self._setting)
            shown = status.versions_first_seen if status is not None else ()
            if shown is not self._shown and shown != self._shown:
                seen = merge_seen(seen, shown, quorum.reporting)
                self._shown = shown
            seen = note_at_quorum(seen, quorum, now)
        if seen is not self.seen:
            self.seen = seen
            self._times = first_seen_times(seen)

    def gate(self, policy: VersionSpec | None) -> VersionGate:
        """The start rule of `policy` (the `version` section in force) over this record."""
        return VersionGate(policy, self._times, self._quorum)

    def standings(
        self, policy: VersionSpec | None, offered: Mapping[str, int], now: datetime
    ) -> list[VersionStanding]:
        """Every recorded version with when `policy` lets it start and what holds it at `now`
        (`offered`: the nodes offered each version that do not run it yet)."""
        return version_standings(policy, self._times, offered, now)
