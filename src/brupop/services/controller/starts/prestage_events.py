"""PrestageEvents: the Events that tell a node's preparation ahead of its turn on its shadow.

`UpdatePrestaging` when the controller asks a node to prepare a version ahead,
`UpdateStagedAhead` once its host holds it, `UpdatePrestageStopped` when the request is
withdrawn before that; `brupop status --timeline` draws the span between them as its own phase.
The holding is noticed by this replica only (a controller started meanwhile records no end).
"""

from __future__ import annotations

from collections.abc import Iterable

from brupop.domain.cluster.objects import ClusterEvent
from brupop.domain.shadow import Shadow
from brupop.domain.starting.prestage_choice import PrestageCandidate
from brupop.ports.cluster.event_recorder import EventRecorder

PRESTAGING = "UpdatePrestaging"
STAGED_AHEAD = "UpdateStagedAhead"
PRESTAGE_STOPPED = "UpdatePrestageStopped"


class PrestageEvents:
    """Records the three Events, each preparation's end once."""

    def __init__(self, events: EventRecorder) -> None:
        self._events = events
        self._preparing: dict[str, str] = {}  # shadow name -> version asked, not yet held

    def asked(self, shadow: Shadow, version: str) -> None:
        """The controller asked `shadow`'s node to prepare `version` ahead."""
        self._preparing[shadow.name] = version
        self._record(shadow, PRESTAGING, f"Preparing {version} ahead of its turn (no cordon)")

    def stopped(self, shadow: Shadow, version: str | None) -> None:
        """The request was withdrawn (a pause, a halt, a pin, a newer version, switched off)."""
        if self._preparing.pop(shadow.name, None) is not None:
            self._record(shadow, PRESTAGE_STOPPED, f"No longer preparing {version} ahead")

    def held(self, shadows: dict[str, Shadow], candidates: Iterable[PrestageCandidate]) -> None:
        """Each candidate whose host now holds the version it was asked for."""
        for candidate in candidates:
            asked = self._preparing.get(candidate.name)
            if asked is not None and candidate.holds(asked):
                del self._preparing[candidate.name]
                self._record(shadows[candidate.name], STAGED_AHEAD, f"{asked} staged ahead")

    def _record(self, shadow: Shadow, reason: str, message: str) -> None:
        self._events.record(
            ClusterEvent(
                shadow_name=shadow.name,
                namespace=shadow.namespace,
                reason=reason,
                message=message,
                uid=shadow.uid,
            )
        )
