"""PrometheusRolloutMetrics: the RolloutMetrics port in a registry of its own.

The original's two gauges keep their names and labels (`brupop_hosts_state{state}`,
`brupop_hosts_version{bottlerocket_version}`). A state seen before reports 0 rather than
vanishing, as in the original (there are nine states). A version is what agents report, so its
series are pruned to the versions nodes report now: at most one series per node, however many
versions an agent has claimed. `brupop_budget_in_use` is capped like the policy's status (its
first `BUDGET_GROUPS_MAX` groups); `brupop_budget_groups_left_out` says how many were not shown.
docs/observability.md gives the bound on the series of every metric.
"""

from __future__ import annotations

from collections.abc import Mapping
from itertools import islice

from prometheus_client import CollectorRegistry, Counter, Gauge, Histogram, generate_latest

from brupop.domain.policy.update_policy_status import BUDGET_GROUPS_MAX
from brupop.domain.rollout.concurrency import ConcurrencyLimit
from brupop.domain.safety.health_gate import GateCheck
from brupop.domain.starting.update_durations import DEFAULT_EXPECTED_SECONDS
from brupop.entrypoints.controller.limit_metric import concurrency_limit_gauge, limit_value
from brupop.ports.monitoring.rollout_metrics import RolloutMetrics, UpdatePhase
from brupop.ports.monitoring.safety_metrics import SafetyMetrics

PHASE_BUCKETS = (5, 15, 30, 60, 120, 300, 600, 900, 1200, 1800, 3600, 7200)
PASS_CPU_BUCKETS = (0.001, 0.002, 0.005, 0.01, 0.025, 0.05, 0.1, 0.25, 0.5, 1, 2.5, 10)
GATE_BUCKETS = (5, 15, 30, 60, 120, 300, 600, 900, 1800, 3600, 7200, 86400)


class PrometheusRolloutMetrics:
    """The controller's collectors; `exposition()` is the `/metrics` body."""

    def __init__(
        self, registry: CollectorRegistry | None = None, *, limit: ConcurrencyLimit | None = None
    ) -> None:
        """`limit`: the one to show until the first pass sets the one it applies."""
        self.registry = registry or CollectorRegistry()
        self._states = Gauge(
            "brupop_hosts_state", "Brupop host's state", ["state"], registry=self.registry
        )
        self._versions = Gauge(
            "brupop_hosts_version",
            "Brupop host's bottlerocket version",
            ["bottlerocket_version"],
            registry=self.registry,
        )
        self._phases = Histogram(
            "brupop_update_phase_duration_seconds",
            "Time one node took for a phase of its update (staging, drain, reboot, update).",
            ["phase"],
            buckets=PHASE_BUCKETS,
            registry=self.registry,
        )
        self._attempts = Counter(
            "brupop_update_attempts", "Node updates started.", registry=self.registry
        )
        self._failures = Counter(
            "brupop_update_failures",
            "Node updates that failed, by reason (agent_error, timeout) and desired state.",
            ["reason", "state"],
            registry=self.registry,
        )
        self._waiting = Gauge(
            "brupop_nodes_waiting", "Nodes waiting, by reason.", ["reason"], registry=self.registry
        )
        self._leader = Gauge(
            "brupop_controller_leader",
            "1 when this replica holds the leader Lease, else 0.",
            registry=self.registry,
        )
        self._paused = Gauge(
            "brupop_fleet_paused",
            "1 while the update policy pauses the rollout, else 0.",
            registry=self.registry,
        )
        self._halted = Gauge(
            "brupop_fleet_halted",
            "1 while the rollout is halted by failed nodes, else 0.",
            registry=self.registry,
        )
        self._gate = Histogram(
            "brupop_health_gate_seconds",
            "Time one node spent in the post-reboot health gate (passed or failed).",
            buckets=GATE_BUCKETS,
            registry=self.registry,
        )
        self._gate_failures = Counter(
            "brupop_health_gate_failures",
            "Nodes that failed the health gate, by the check that failed.",
            ["check"],
            registry=self.registry,
        )
        # Every check's series exists from the start at 0, so `increase()` and the dashboard see
        # the first failure as one rather than as a new series with nothing before it.
        for check in GateCheck:
            self._gate_failures.labels(check=check.value)
        self._budgets = Gauge(
            "brupop_budget_in_use",
            "Nodes outside Idle per budget (its groupBy label key) and group (the label's value).",
            ["budget", "group"],
            registry=self.registry,
        )
        self._budgets_left_out = Gauge(
            "brupop_budget_groups_left_out",
            f"Budget groups in use beyond the first {BUDGET_GROUPS_MAX}, which "
            "brupop_budget_in_use (like the policy's status) does not show.",
            registry=self.registry,
        )
        self._budgets_set: dict[tuple[str, str], int] = {}
        self._limit = concurrency_limit_gauge(self.registry)
        self._expected = Gauge(
            "brupop_expected_update_seconds",
            "The update time finishBy expects: the 90th percentile of the last 20 update "
            "durations, 900 before there is any history.",
            registry=self.registry,
        )
        self._expected.set(DEFAULT_EXPECTED_SECONDS)
        self._pass_failures = Counter(
            "brupop_controller_pass_failures",
            "Controller passes that failed on an unexpected error (a bug) and were retried.",
            registry=self.registry,
        )
        self._pass_cpu = Histogram(
            "brupop_controller_pass_cpu_seconds",
            "CPU seconds the loop thread spent on one tick (catch-up, passes, writes, publishing),"
            " without the watch threads.",
            buckets=PASS_CPU_BUCKETS,
            registry=self.registry,
        )
        self._seen_states: set[str] = set()
        self._shown_versions: set[str] = set()
        if limit is not None:
            self.set_concurrency_limit(limit.maximum)

    def set_hosts(self, states: Mapping[str, int], versions: Mapping[str, int]) -> None:
        self._seen_states |= set(states)
        for state in self._seen_states:
            self._states.labels(state=state).set(states.get(state, 0))
        reported = {version for version, count in versions.items() if count > 0}
        for gone in self._shown_versions - reported:
            self._versions.remove(gone)
        for version in reported:
            self._versions.labels(bottlerocket_version=version).set(versions[version])
        self._shown_versions = reported

    def set_waiting(self, reasons: Mapping[str, int]) -> None:
        for reason, count in reasons.items():
            self._waiting.labels(reason=reason).set(count)

    def observe_phase(self, phase: UpdatePhase, seconds: float) -> None:
        self._phases.labels(phase=phase.value).observe(seconds)

    def count_attempt(self) -> None:
        self._attempts.inc()

    def count_failure(self, reason: str, state: str) -> None:
        self._failures.labels(reason=reason, state=state).inc()

    def set_leader(self, leading: bool) -> None:
        self._leader.set(1 if leading else 0)

    def set_fleet(self, *, paused: bool, halted: bool) -> None:
        self._paused.set(1 if paused else 0)
        self._halted.set(1 if halted else 0)

    def observe_health_gate(self, seconds: float) -> None:
        self._gate.observe(max(seconds, 0.0))

    def count_health_gate_failure(self, check: str) -> None:
        self._gate_failures.labels(check=check).inc()

    def set_fleet_paused(self, paused: bool) -> None:
        self._paused.set(1 if paused else 0)

    def set_budgets_in_use(self, in_use: Mapping[tuple[str, str], int]) -> None:
        """The first BUDGET_GROUPS_MAX groups, in the order given (the status shows the same
        ones); the rest only counted."""
        self._budgets_left_out.set(max(len(in_use) - BUDGET_GROUPS_MAX, 0))
        shown = dict(islice(in_use.items(), BUDGET_GROUPS_MAX))
        if shown == self._budgets_set:
            return
        for gone in self._budgets_set.keys() - shown.keys():
            self._budgets.remove(*gone)
        for (budget, group), count in shown.items():
            self._budgets.labels(budget=budget, group=group).set(count)
        self._budgets_set = shown

    def set_concurrency_limit(self, maximum: int | None) -> None:
        self._limit.set(limit_value(maximum))

    def set_expected_update(self, seconds: int) -> None:
        self._expected.set(seconds)

    def count_pass_failure(self) -> None:
        self._pass_failures.inc()

    def observe_pass_cpu(self, seconds: float) -> None:
        self._pass_cpu.observe(seconds)

    def exposition(self) -> bytes:
        """The Prometheus text format of every collector."""
        return generate_latest(self.registry)


_: type[RolloutMetrics] = PrometheusRolloutMetrics
_safety: type[SafetyMetrics] = PrometheusRolloutMetrics
