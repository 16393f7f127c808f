"""The `--pause-at` / `--resume-at` scenario: change `spec.paused` of the `default` policy while
the rollout goes on, as `brupop pause` and `brupop resume` would (with no policy, creating one
that changes nothing but `paused`, and deleting it again on resume), and remember when each
write began and ended, so the report can tell which node starts came before, during and after
the pause.

Both moments count from the rollout's beginning: the first node leaving Idle, or every node
having reported its first status if that comes first (a fleet paused from the start never
leaves Idle). Counting from the process start instead would make the scenario depend on how
fast the agents come up on a busy machine: a pause meant to catch a node in flight could come
before any node started.
"""

from __future__ import annotations

import time
from collections.abc import Callable
from dataclasses import dataclass
from typing import Any

from brupop.cli.fleet_description.simulated_cluster import PolicyObjects, SimulatedCluster
from brupop.domain.policy.pause_only import is_pause_only, pause_only
from brupop.domain.policy.policy_object import policy_object
from brupop.domain.policy.update_policy import DEFAULT_POLICY_NAME
from brupop.domain.policy.update_policy_status import HaltReason, PolicyPhase


@dataclass(frozen=True)
class PauseMoment:
    """One change of `spec.paused`, in seconds since the run started: the write's start and
    end (a pass that began before the end may not have seen it yet)."""

    paused: bool
    requested_at: float
    written_at: float

    def as_json(self) -> dict[str, Any]:
        return {
            "paused": self.paused,
            "requested_at": round(self.requested_at, 3),
            "written_at": round(self.written_at, 3),
        }


class PauseSchedule:
    """Pause, then resume, at fixed moments of the run."""

    def __init__(
        self,
        policies: PolicyObjects,
        *,
        pause_at: float | None,
        resume_at: float | None,
        note: Callable[[str], None],
    ) -> None:
        self._policies = policies
        self._due = sorted(
            [
                (at, paused)
                for at, paused in ((pause_at, True), (resume_at, False))
                if at is not None
            ]
        )
        self.note = note
        self.moments: list[PauseMoment] = []
        self.last_written_at: float | None = None
        """When (monotonic) the last change was written."""

    @property
    def done(self) -> bool:
        return not self._due

    def step(self, began_at: float | None, run_started_at: float) -> None:
        """Make the changes whose moment has come; `began_at` is when (monotonic) the rollout
        began (None: not yet), `run_started_at` the origin of the moments recorded."""
        if began_at is None:
            return
        while self._due and time.monotonic() - began_at >= self._due[0][0]:
            _, paused = self._due.pop(0)
            requested = time.monotonic()
            self._set_paused(paused)
            self.last_written_at = written = time.monotonic()
            moment = PauseMoment(paused, requested - run_started_at, written - run_started_at)
            self.moments.append(moment)
            self.note(f"policy {'paused' if paused else 'resumed'} (scenario)")

    def _set_paused(self, paused: bool) -> None:
        current = self._policies.read().default
        if current is not None and not paused and is_pause_only(current):
            self._policies.delete(DEFAULT_POLICY_NAME)
            return
        if current is None or current.spec is None:
            obj = policy_object(pause_only(paused))
            del obj["metadata"]["namespace"]  # brupop's
        else:
            obj = policy_object(current)
        obj["spec"]["paused"] = paused
        self._policies.apply(obj)


_STATUS_WAIT_SECONDS = 2.0


def policy_phase(cluster: SimulatedCluster, nodes: int) -> str | None:
    """The phase the controller last wrote on the `default` policy (None: no policy). A run
    that ends as its last node comes back to Idle may end before the controller's pass that
    writes it: wait (a little) for the status to count every node Idle."""
    deadline = time.monotonic() + _STATUS_WAIT_SECONDS
    while True:
        policy = cluster.policies.read().default
        if policy is None:
            return None
        status = policy.status
        if (status is not None and status.nodes.idle == nodes) or time.monotonic() >= deadline:
            return status.phase.value if status is not None else None
        time.sleep(0.05)


def policy_halt(cluster: SimulatedCluster) -> HaltReason | None:
    """What halted the fleet, as the controller wrote it on the `default` policy (None: no
    halt). A halted status without a named cause still counts, as an unknown node."""
    policy = cluster.policies.read().default
    status = policy.status if policy is not None else None
    if status is None or not status.halted:
        return None
    return status.halt_reason or HaltReason(node="unknown", check="unknown")


def policy_soaking(cluster: SimulatedCluster) -> bool:
    """The controller says the canaries are soaking: a quiet fleet is not settled yet."""
    policy = cluster.policies.read().default
    status = policy.status if policy is not None else None
    return status is not None and status.phase is PolicyPhase.SOAKING
