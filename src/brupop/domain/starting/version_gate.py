"""The version gate: which offered version a node may start updating to, and from when.

Two rules of the policy's `version` section hold a candidate by the version it is offered:
the pin (nothing newer than `pin` starts, by semver precedence as `versions` compares them)
and the release age (a version starts only `minReleaseAgeHours` after a host first offered
it, as `versions_first_seen` recorded). A version with no first-seen time yet waits for the
release-age quorum when fewer nodes report it (`release_quorum`), and otherwise counts as first
seen now: it was just offered, so it is as young as can be.
"""

from __future__ import annotations

from collections.abc import Mapping
from datetime import UTC, datetime, timedelta
from typing import Any, NamedTuple

from brupop.domain.policy.scheduling_policy import VersionSpec
from brupop.domain.reason import Reason
from brupop.domain.starting.release_quorum import VersionQuorum
from brupop.domain.starting.start_holds import StartCandidate, StartHold
from brupop.domain.timestamps import later
from brupop.domain.versions import compare_versions


def eligible_at(policy: VersionSpec | None, first_seen: datetime) -> datetime | None:
    """The moment a version first offered at `first_seen` may start; None when the policy
    asks for no release age."""
    if policy is None or policy.min_release_age_hours <= 0:
        return None
    return later(first_seen, timedelta(hours=policy.min_release_age_hours))


def version_hold(
    policy: VersionSpec | None,
    first_seen: Mapping[str, datetime],
    target: str,
    now: datetime,
    quorum: VersionQuorum | None = None,
) -> StartHold | None:
    """Why a node offered `target` may not start at `now`; None when the policy lets it.
    `quorum`: who reports each version; a version without a first-seen time that fewer nodes
    report than it needs waits for them (None: no quorum, as for a fleet of one)."""
    if policy is None:
        return None
    if policy.pin is not None and compare_versions(target, policy.pin) > 0:
        return StartHold(Reason.PINNED, f"pinned to {policy.pin}")
    seen = first_seen.get(target)
    if seen is None:
        if quorum is not None and not quorum.reached(target) and policy.min_release_age_hours > 0:
            return StartHold(Reason.RELEASE_TOO_NEW, quorum.shortfall(target))
        seen = now
    eligible = eligible_at(policy, seen)
    if eligible is not None and now < eligible:
        return StartHold(
            Reason.RELEASE_TOO_NEW,
            f"{target} first offered {_when(seen)}; eligible at {_when(eligible)}",
            until=eligible,
        )
    return None


class VersionStanding(NamedTuple):
    """One recorded version as `brupop status` shows it: when it was first offered, when the
    release age lets it start (None: no release age), how many nodes are offered it and do
    not run it yet, and what holds them (None: nothing, by the version)."""

    version: str
    first_seen: datetime
    eligible_at: datetime | None
    nodes: int
    hold: StartHold | None

    def as_json(self) -> dict[str, Any]:
        """The entry of the controller's `/status` `versions` list."""
        hold = self.hold
        return {
            "version": self.version,
            "first_seen": _when(self.first_seen),
            "eligible_at": _when(self.eligible_at) if self.eligible_at is not None else None,
            "nodes": self.nodes,
            "reason": hold.reason.value if hold is not None else None,
            "waiting": hold.detail if hold is not None else None,
        }


def version_standings(
    policy: VersionSpec | None,
    first_seen: Mapping[str, datetime],
    offered: Mapping[str, int],
    now: datetime,
) -> list[VersionStanding]:
    """Every recorded version at `now`, oldest first seen first; `offered` counts the nodes
    offered each version that do not run it yet. Only an offered version has a hold: the
    record may come from an edited status, with a version the pin cannot be compared with."""
    ordered = sorted(first_seen.items(), key=lambda item: (item[1], item[0]))
    return [
        VersionStanding(
            version,
            at,
            eligible_at(policy, at),
            offered.get(version, 0),
            version_hold(policy, first_seen, version, now) if offered.get(version) else None,
        )
        for version, at in ordered
    ]


class VersionGate:
    """The start rule of the policy's `version` section (`start_holds.StartRule`)."""

    def __init__(
        self,
        policy: VersionSpec | None,
        first_seen: Mapping[str, datetime],
        quorum: VersionQuorum | None = None,
    ) -> None:
        self._policy = policy
        self._first_seen = first_seen
        self._quorum = quorum

    def hold(self, candidate: StartCandidate, now: datetime) -> StartHold | None:
        """Why `candidate` may not start yet by the version it is offered."""
        target = candidate.target_version
        return version_hold(self._policy, self._first_seen, target, now, self._quorum)

    def started(self, candidate: StartCandidate) -> None:
        """Nothing to count: a version's eligibility does not depend on how many started."""


def _when(moment: datetime) -> str:
    return moment.astimezone(UTC).isoformat(timespec="seconds")
