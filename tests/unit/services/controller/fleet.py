"""A scripted fleet for controller tests: an in-memory cluster, opted-in nodes, and a minimal
agent per node that follows the spec the way the real agent's protocol does."""

from __future__ import annotations

import itertools
from collections.abc import Collection, Mapping
from dataclasses import dataclass, field
from datetime import UTC, datetime

from brupop.adapters.memory.cluster import InMemoryCluster
from brupop.adapters.memory.gates import InMemoryAlertSource, InMemoryHttpProber
from brupop.domain.rollout.concurrency import ConcurrencyLimit
from brupop.domain.rollout.rollout import RolloutRules
from brupop.domain.shadow import (
    CRASH_COUNT_MAX,
    OPT_IN_LABEL,
    OPT_IN_VALUE,
    Shadow,
    ShadowStatus,
    shadow_name,
)
from brupop.domain.states import StateTimeouts, UpdateState
from brupop.domain.windows.maintenance_window import MaintenanceWindow
from brupop.entrypoints.controller.container import ControllerContainer, controller_container
from brupop.ports.monitoring.rollout_metrics import RolloutMetrics, UpdatePhase
from brupop.services.controller.config import ControllerConfig
from brupop.services.controller.replica import ControllerMetrics
from brupop.services.controller.runtime.quiet_metrics import QuietMetrics
from brupop.services.controller.service import ControllerService
from tests.fakes.clock import FakeClock

OLD, NEW = "1.19.0", "1.20.0"
START = datetime(2026, 1, 5, 10, 0, 0, tzinfo=UTC)  # a Monday
_identities = itertools.count(1)


@dataclass
class RecordingMetrics:
    """RolloutMetrics that keeps what it is told."""

    hosts: tuple[Mapping[str, int], Mapping[str, int]] = ({}, {})
    waiting: Mapping[str, int] = field(default_factory=dict)
    phases: list[tuple[UpdatePhase, float]] = field(default_factory=list)
    attempts: int = 0
    failures: list[tuple[str, str]] = field(default_factory=list)
    leading: bool | None = None
    fleet_paused: bool | None = None
    fleet_halted: bool | None = None
    gate_seconds: list[float] = field(default_factory=list)
    gate_failures: list[str] = field(default_factory=list)
    budgets: Mapping[tuple[str, str], int] = field(default_factory=dict)
    concurrency_limits: list[int | None] = field(default_factory=list)
    expected_update: int | None = None
    pass_failures: int = 0
    pass_cpu: list[float] = field(default_factory=list)

    def set_hosts(self, states: Mapping[str, int], versions: Mapping[str, int]) -> None:
        self.hosts = (dict(states), dict(versions))

    def set_waiting(self, reasons: Mapping[str, int]) -> None:
        self.waiting = dict(reasons)

    def observe_phase(self, phase: UpdatePhase, seconds: float) -> None:
        self.phases.append((phase, seconds))

    def count_attempt(self) -> None:
        self.attempts += 1

    def count_failure(self, reason: str, state: str) -> None:
        self.failures.append((reason, state))

    def set_leader(self, leading: bool) -> None:
        self.leading = leading

    def set_fleet_paused(self, paused: bool) -> None:
        self.fleet_paused = paused

    def set_budgets_in_use(self, in_use: Mapping[tuple[str, str], int]) -> None:
        self.budgets = dict(in_use)

    def set_concurrency_limit(self, maximum: int | None) -> None:
        self.concurrency_limits.append(maximum)

    def set_expected_update(self, seconds: int) -> None:
        self.expected_update = seconds

    def count_pass_failure(self) -> None:
        self.pass_failures += 1

    def observe_pass_cpu(self, seconds: float) -> None:
        self.pass_cpu.append(seconds)

    def set_fleet(self, *, paused: bool, halted: bool) -> None:
        self.fleet_paused = paused
        self.fleet_halted = halted

    def observe_health_gate(self, seconds: float) -> None:
        self.gate_seconds.append(seconds)

    def count_health_gate_failure(self, check: str) -> None:
        self.gate_failures.append(check)


class Fleet:
    """Nodes with agents that report status only when told to (`step`, `fail`)."""

    def __init__(
        self, count: int, *, clock: FakeClock | None = None, unreported: Collection[str] = ()
    ) -> None:
        """`count` nodes, node-00 on; those `unreported` have a shadow but no status yet."""
        self.clock = clock or FakeClock(START)
        self.cluster = InMemoryCluster(clock=self.clock)
        self.prober = InMemoryHttpProber()
        self.alerts = InMemoryAlertSource()
        self.names = [f"node-{i:02d}" for i in range(count)]
        for name in self.names:
            self.add_node(name, reported=name not in unreported)

    def add_node(
        self, name: str, *, current: str = OLD, target: str = NEW, reported: bool = True
    ) -> None:
        """An opted-in node and its shadow; `reported`: its agent has made its first report
        (otherwise the shadow has no status until `first_report`)."""
        node = self.cluster.add_node(name, labels={OPT_IN_LABEL: OPT_IN_VALUE})
        self.cluster.shadows.create(name, node.uid)
        if reported:
            self.first_report(name, current=current, target=target)

    def first_report(self, name: str, *, current: str = OLD, target: str = NEW) -> None:
        """The agent of `name` reports for the first time: Idle on `current`, offered `target`."""
        status = ShadowStatus(
            current_version=current, target_version=target, current_state=UpdateState.IDLE
        )
        self.cluster.shadows.update_status(shadow_name(name), status)

    def container(
        self,
        limit: int | None = 3,
        *,
        window: str = "* * * * * * *",
        timeouts: StateTimeouts | None = None,
        controller_node: str | None = None,
        metrics: RecordingMetrics | RolloutMetrics | None = None,
        release_age_quorum: int | None = None,
    ) -> ControllerContainer:
        """The container of a controller replica over this fleet's cluster, clock, prober and
        alert source; a test overrides one more provider before asking for `service()`."""
        config = ControllerConfig(
            rollout_rules=RolloutRules(
                ConcurrencyLimit(limit), timeouts or StateTimeouts(), controller_node
            ),
            window=MaintenanceWindow.starting(window, now=self.clock.now()),
            namespace=self.cluster.namespace,
            identity=f"controller-{next(_identities)}",
            release_age_quorum=release_age_quorum,
        )
        reported = ControllerMetrics(
            rollout=metrics or QuietMetrics(),
            safety=metrics if isinstance(metrics, RecordingMetrics) else QuietMetrics(),
        )
        container = controller_container(self.cluster, config, self.clock, reported)
        container.prober.override(self.prober)
        container.alert_source.override(self.alerts)
        return container

    def controller(
        self,
        limit: int | None = 3,
        *,
        window: str = "* * * * * * *",
        timeouts: StateTimeouts | None = None,
        controller_node: str | None = None,
        metrics: RecordingMetrics | RolloutMetrics | None = None,
        release_age_quorum: int | None = None,
    ) -> ControllerService:
        """A controller replica over this fleet (see `container`)."""
        return self.container(
            limit,
            window=window,
            timeouts=timeouts,
            controller_node=controller_node,
            metrics=metrics,
            release_age_quorum=release_age_quorum,
        ).service()

    # --- looking -------------------------------------------------------------------------

    def shadow(self, node: str) -> Shadow:
        return self.cluster.shadows.get(shadow_name(node))

    def shadows(self) -> list[Shadow]:
        return list(self.cluster.shadows.list().items)

    def specs(self) -> dict[str, UpdateState]:
        return {s.node_name: s.spec.state for s in self.shadows()}

    def outside_idle(self) -> int:
        return sum(
            1
            for s in self.shadows()
            if s.spec.state is not UpdateState.IDLE
            or (s.status is not None and s.status.current_state is not UpdateState.IDLE)
        )

    def all_updated(self) -> bool:
        return all(
            s.status is not None
            and s.status.current_version == NEW
            and s.status.current_state is UpdateState.IDLE
            for s in self.shadows()
        )

    # --- agents --------------------------------------------------------------------------

    def step(self, node: str) -> bool:
        """The agent of `node` does what its spec asks (successfully); False if nothing to do."""
        shadow = self.shadow(node)
        status, spec = shadow.status, shadow.spec
        if status is None or status.current_state == spec.state:
            return False
        if status.current_state is UpdateState.ERROR_RESET and spec.state is not UpdateState.IDLE:
            return False
        finished = status.current_state is UpdateState.MONITORING_UPDATE
        current = status.current_version
        if spec.state is UpdateState.REBOOTED_INTO_UPDATE and spec.version:
            current = spec.version
        self._report(
            node,
            status.model_copy(
                update={
                    "current_state": spec.state,
                    "current_version": current,
                    "crash_count": 0 if finished else status.crash_count,
                    "state_transition_failure_timestamp": (
                        None if finished else status.state_transition_failure_timestamp
                    ),
                }
            ),
        )
        return True

    def step_all(self) -> int:
        return sum(self.step(name) for name in self.names if self._exists(name))

    def fail(self, node: str) -> bool:
        """The agent of `node` fails the step its spec asks for (ErrorReset, one more crash)."""
        shadow = self.shadow(node)
        status = shadow.status
        if status is None or status.current_state == shadow.spec.state:
            return False
        if status.current_state is UpdateState.ERROR_RESET:
            return False
        self._report(
            node,
            status.model_copy(
                update={
                    "current_state": UpdateState.ERROR_RESET,
                    "crash_count": min(status.crash_count + 1, CRASH_COUNT_MAX),
                    "state_transition_failure_timestamp": self.clock.now(),
                }
            ),
        )
        return True

    def _report(self, node: str, status: ShadowStatus) -> None:
        self.cluster.shadows.update_status(shadow_name(node), status)

    def _exists(self, node: str) -> bool:
        return self.cluster.shadows.store.find(shadow_name(node)) is not None
