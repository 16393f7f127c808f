"""QuietMetrics: a RolloutMetrics that publishes nothing, for runs without a metrics endpoint."""

from __future__ import annotations

from collections.abc import Mapping

from brupop.ports.monitoring.rollout_metrics import RolloutMetrics, UpdatePhase
from brupop.ports.monitoring.safety_metrics import SafetyMetrics


class QuietMetrics:
    """Accepts every measurement and keeps none."""

    def set_hosts(self, states: Mapping[str, int], versions: Mapping[str, int]) -> None:
        return None

    def set_waiting(self, reasons: Mapping[str, int]) -> None:
        return None

    def observe_phase(self, phase: UpdatePhase, seconds: float) -> None:
        return None

    def count_attempt(self) -> None:
        return None

    def count_failure(self, reason: str, state: str) -> None:
        return None

    def set_leader(self, leading: bool) -> None:
        return None

    def set_fleet(self, *, paused: bool, halted: bool) -> None:
        return None

    def observe_health_gate(self, seconds: float) -> None:
        return None

    def count_health_gate_failure(self, check: str) -> None:
        return None

    def set_fleet_paused(self, paused: bool) -> None:
        return None

    def set_budgets_in_use(self, in_use: Mapping[tuple[str, str], int]) -> None:
        return None

    def set_concurrency_limit(self, maximum: int | None) -> None:
        return None

    def set_expected_update(self, seconds: int) -> None:
        return None

    def count_pass_failure(self) -> None:
        return None

    def observe_pass_cpu(self, seconds: float) -> None:
        return None


_: RolloutMetrics = QuietMetrics()
_safety: SafetyMetrics = QuietMetrics()
