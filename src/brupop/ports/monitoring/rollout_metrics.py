"""RolloutMetrics: what the controller publishes about the fleet and its rollout.

The Prometheus adapter keeps the original's names (`brupop_hosts_state{state}`,
`brupop_hosts_version{bottlerocket_version}`) and adds phase durations, attempts, failures,
waiting nodes and leadership.
"""

from __future__ import annotations

from collections.abc import Mapping
from enum import StrEnum
from typing import Protocol


class UpdatePhase(StrEnum):
    """A timed stretch of one node's update."""

    STAGING = "staging"
    DRAIN = "drain"
    REBOOT = "reboot"
    UPDATE = "update"


class RolloutMetrics(Protocol):
    """Gauges, counters and histograms of the rollout; every call is cheap and never raises."""

    def set_hosts(self, states: Mapping[str, int], versions: Mapping[str, int]) -> None:
        """Nodes per reported state and per running version (series seen before drop to 0)."""
        ...

    def set_waiting(self, reasons: Mapping[str, int]) -> None:
        """Nodes waiting, per reason code."""
        ...

    def observe_phase(self, phase: UpdatePhase, seconds: float) -> None:
        """One node took `seconds` for `phase`."""
        ...

    def count_attempt(self) -> None:
        """The controller started one node's update."""
        ...

    def count_failure(self, reason: str, state: str) -> None:
        """One update failed (`agent_error` or `timeout`) on its way to `state`."""
        ...

    def set_leader(self, leading: bool) -> None:
        """Whether this replica holds the leader Lease."""
        ...

    def set_fleet_paused(self, paused: bool) -> None:
        """Whether the update policy pauses the fleet."""
        ...

    def set_budgets_in_use(self, in_use: Mapping[tuple[str, str], int]) -> None:
        """Nodes outside Idle per (budget's groupBy key, group); groups not given are gone."""
        ...

    def set_concurrency_limit(self, maximum: int | None) -> None:
        """The global limit the controller applies (the policy's `maxConcurrent` when set,
        else `MAX_CONCURRENT_UPDATE`); None: unlimited."""
        ...

    def count_pass_failure(self) -> None:
        """A controller pass failed on an unexpected error (a bug) and will be tried again."""
        ...

    def observe_pass_cpu(self, seconds: float) -> None:
        """CPU seconds the controller's loop thread spent on one tick: its catch-up, passes,
        writes and publishing (not the watch threads' decoding)."""
        ...

    def set_expected_update(self, seconds: int) -> None:
        """The update time finishBy expects: the 90th percentile of the last 20 update
        durations, 900 before there is any."""
        ...
