"""SafetyMetrics: what the controller publishes about the rollout's safety rules.

`brupop_fleet_paused` and `brupop_fleet_halted` (0 or 1), `brupop_health_gate_seconds` (how long
nodes spent in the health gate, passed or failed) and `brupop_health_gate_failures_total{check}`.
The Prometheus adapter implements it next to RolloutMetrics, in the same registry.
"""

from __future__ import annotations

from typing import Protocol


class SafetyMetrics(Protocol):
    """Gauges, a histogram and a counter of the safety rules; every call is cheap, never raises."""

    def set_fleet(self, *, paused: bool, halted: bool) -> None:
        """Whether the fleet is paused, and whether it is halted."""
        ...

    def observe_health_gate(self, seconds: float) -> None:
        """One node left the health gate (passed or failed) after `seconds` in it."""
        ...

    def count_health_gate_failure(self, check: str) -> None:
        """One node failed the gate on `check` (a GateCheck value, e.g. `nodeReady`)."""
        ...
