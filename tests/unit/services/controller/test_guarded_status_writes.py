"""The controller's failure records (crash count + 1, failure time) are status writes computed
from the shadow it read: guarded by that read's resourceVersion, an agent's report stored in
between is never reverted; the write conflicts and the next pass decides again. The Event of a
write names the shadow by the uid the writer holds, with no read of it."""

from __future__ import annotations

from datetime import UTC, datetime

import pytest

from brupop.adapters.memory.cluster import InMemoryCluster
from brupop.adapters.memory.shadows import InMemoryShadowRepository
from brupop.domain.rollout.rollout import ChangeKind, RolloutPlan, SpecChange
from brupop.domain.shadow import Shadow, ShadowSpec, ShadowStatus
from brupop.domain.states import StateTimeouts, UpdateState
from brupop.ports.errors import ConflictError
from brupop.services.controller.runtime.quiet_metrics import QuietMetrics
from brupop.services.controller.writing.rollout_writer import RolloutWriter
from brupop.services.controller.writing.write_journal import WriteJournal

NOW = datetime(2026, 1, 5, 10, 0, tzinfo=UTC)
MONITORING = ShadowStatus(
    current_version="1.1.0", target_version="1.1.0", current_state=UpdateState.MONITORING_UPDATE
)
# What the agent reports while the controller decides: it moved on, with a crash of its own.
REPORT = MONITORING.model_copy(update={"crash_count": 2, "current_state": UpdateState.IDLE})


class AgentReportsDuringRead:
    """The shadows, where an agent's report lands right after the controller's next read."""

    def __init__(self, inner: InMemoryShadowRepository) -> None:
        self.inner = inner
        self.armed = False

    def __getattr__(self, name: str) -> object:
        return getattr(self.inner, name)

    def get(self, name: str) -> Shadow:
        read = self.inner.get(name)
        if self.armed:
            self.armed = False
            self.inner.update_status(name, REPORT)
        return read


def gated_shadow(cluster: InMemoryCluster) -> Shadow:
    shadow = cluster.shadows.create("node-a", "uid-a")
    spec = ShadowSpec(
        state=UpdateState.MONITORING_UPDATE, state_transition_timestamp=NOW, version="1.1.0"
    )
    cluster.shadows.replace_spec(shadow.name, spec, None)
    return cluster.shadows.update_status(shadow.name, MONITORING)


def writer_over(shadows: object, cluster: InMemoryCluster) -> RolloutWriter:
    return RolloutWriter(
        shadows,  # type: ignore[arg-type]  # the wrapper delegates the rest of the port
        cluster.events,
        QuietMetrics(),
        StateTimeouts(),
        WriteJournal(),
    )


def test_a_failed_gate_records_one_more_crash_when_nothing_changed_meanwhile() -> None:
    cluster = InMemoryCluster()
    shadow = gated_shadow(cluster)

    written = writer_over(cluster.shadows, cluster).fail_gate(shadow, "probe failed", NOW)

    assert written is not None
    assert cluster.shadows.get(shadow.name).status == MONITORING.model_copy(
        update={"crash_count": 1, "state_transition_failure_timestamp": NOW}
    )


def test_a_failed_gate_does_not_revert_an_agents_report_stored_after_its_read() -> None:
    cluster = InMemoryCluster()
    shadow = gated_shadow(cluster)
    racing = AgentReportsDuringRead(cluster.shadows)
    racing.armed = True

    with pytest.raises(ConflictError):
        writer_over(racing, cluster).fail_gate(shadow, "probe failed", NOW)

    stored = cluster.shadows.get(shadow.name)
    assert stored.status == REPORT
    assert stored.spec.state is UpdateState.MONITORING_UPDATE  # the spec was not written either


def test_a_started_node_s_event_carries_the_uid_of_the_shadow_written() -> None:
    cluster = InMemoryCluster()
    shadow = cluster.shadows.create("node-a", "uid-a")
    start = ShadowSpec(state=UpdateState.STAGED_AND_PERFORMED_UPDATE, version="1.1.0")
    plan = RolloutPlan((SpecChange(shadow, start, ChangeKind.START),), 0, ())

    writer_over(cluster.shadows, cluster).apply(plan, NOW, lambda: True)

    (event,) = cluster.events.recorded
    assert event.reason == "UpdateStarted"
    assert event.uid is not None and event.uid == shadow.uid
