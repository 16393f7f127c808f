"""The update policy's `drain` section in the apiserver's drains: timeout, grace period, and
what happens at the timeout (`skip`, or `force` in the listed namespaces only)."""

from __future__ import annotations

from collections.abc import Mapping
from typing import Any

import pytest
import structlog

from brupop.adapters.memory.cluster import InMemoryCluster
from brupop.adapters.memory.update_policies import InMemoryUpdatePolicyRepository
from brupop.domain.cluster.objects import (
    NODE_EVENT_NAMESPACE,
    ClusterEvent,
    EventSubject,
    EventType,
)
from brupop.domain.policy.policy_object import UpdatePolicy
from brupop.ports.cluster.pod_repository import PodRepository
from brupop.ports.errors import DrainFailedError, UnavailableError
from brupop.services.apiserver.drain.drainer import Drainer, DrainReport
from brupop.services.apiserver.drain.forced_removal import (
    FORCED_REASON,
    NOT_FORCED_REASON,
    ForcedRemoval,
)
from brupop.services.apiserver.drain.node_actions import NodeActions
from brupop.services.apiserver.drain.policy_source import DrainPolicySource
from tests.unit.services.apiserver.drain_fakes import (
    TIMINGS,
    RecordingPods,
    SteppingClock,
)

ENVIRONMENT_TIMEOUT = TIMINGS.timeout_seconds  # 60 s


class UnreachablePolicies(InMemoryUpdatePolicyRepository):
    """Policies behind an API that fails every read."""

    def get(self) -> UpdatePolicy:
        raise UnavailableError("get update policy 'default': connection refused")


class CountingPolicies(InMemoryUpdatePolicyRepository):
    """Policies that count their reads."""

    reads = 0

    def get(self) -> UpdatePolicy:
        self.reads += 1
        return super().get()


class TimedDeletions(RecordingPods):
    """Recording pods that also note when each deletion came."""

    def __init__(self, inner: PodRepository, clock: SteppingClock) -> None:
        super().__init__(inner)
        self._clock = clock
        self.deleted_at: list[float] = []

    def delete(self, namespace: str, name: str) -> None:
        self.deleted_at.append(self._clock.monotonic())
        super().delete(namespace, name)


def apply_drain(cluster: InMemoryCluster, drain: Mapping[str, Any]) -> None:
    cluster.policies.apply({"metadata": {"name": "default"}, "spec": {"drain": dict(drain)}})


def drainer(
    cluster: InMemoryCluster,
    clock: SteppingClock,
    *,
    pods: RecordingPods | None = None,
    policies: InMemoryUpdatePolicyRepository | None = None,
) -> Drainer:
    chosen = pods or RecordingPods(cluster.pods)
    return Drainer(
        actions=NodeActions(cluster.nodes),
        pods=chosen,
        clock=clock,
        timings=TIMINGS,
        policy=DrainPolicySource(policies or cluster.policies, clock),
        forced=ForcedRemoval(chosen, cluster.events),
    )


def block(cluster: InMemoryCluster, namespace: str, name: str) -> None:
    """A pod on n1 that its PodDisruptionBudget never lets go."""
    cluster.add_pod(namespace, name, "n1", labels={"app": name})
    cluster.add_disruption_budget(namespace, f"{name}-pdb", {"app": name}, min_available=1)


def timed_drain(drain: Drainer, clock: SteppingClock) -> tuple[float, DrainFailedError | None]:
    """How long the drain of n1 took by the clock, and how it failed (None: it succeeded)."""
    started = clock.monotonic()
    try:
        drain.drain("n1")
    except DrainFailedError as failure:
        return clock.monotonic() - started, failure
    return clock.monotonic() - started, None


def node_events(cluster: InMemoryCluster) -> list[ClusterEvent]:
    return [e for e in cluster.events.recorded if e.subject is EventSubject.NODE]


def test_the_policys_drain_timeout_replaces_the_environments(
    cluster: InMemoryCluster, clock: SteppingClock
) -> None:
    block(cluster, "apps", "db-0")
    apply_drain(cluster, {"timeoutSeconds": 300})

    took, failure = timed_drain(drainer(cluster, clock), clock)

    assert failure is not None and "gave up after 300s" in str(failure)
    assert 300 <= took < 300 + TIMINGS.retry_interval_seconds + 1


def test_a_shorter_policy_timeout_gives_up_before_the_environments(
    cluster: InMemoryCluster, clock: SteppingClock
) -> None:
    block(cluster, "apps", "db-0")
    apply_drain(cluster, {"timeoutSeconds": 10})

    took, failure = timed_drain(drainer(cluster, clock), clock)

    assert failure is not None and "gave up after 10s" in str(failure)
    assert took < ENVIRONMENT_TIMEOUT


def test_the_policys_grace_period_reaches_every_eviction(
    cluster: InMemoryCluster, clock: SteppingClock
) -> None:
    cluster.add_pod("apps", "web-1", "n1")
    cluster.add_pod("batch", "worker-1", "n1")
    apply_drain(cluster, {"gracePeriodSeconds": 7})

    drainer(cluster, clock).drain("n1")

    assert cluster.pods.eviction_grace_periods == {"apps/web-1": 7, "batch/worker-1": 7}


def test_without_a_policy_evictions_leave_each_pods_own_grace_period(
    cluster: InMemoryCluster, clock: SteppingClock
) -> None:
    cluster.add_pod("apps", "web-1", "n1")

    drainer(cluster, clock).drain("n1")

    assert cluster.pods.eviction_grace_periods == {"apps/web-1": None}


def test_force_deletes_after_the_timeout_only_the_blocking_pods_of_the_listed_namespaces(
    cluster: InMemoryCluster, clock: SteppingClock
) -> None:
    block(cluster, "apps", "db-0")
    block(cluster, "queue", "broker-0")
    block(cluster, "payments", "ledger-0")
    cluster.add_pod("apps", "web-1", "n1")  # evictable: evicted, never forced
    apply_drain(
        cluster, {"timeoutSeconds": 120, "onTimeout": "force", "forceNamespaces": ["apps", "queue"]}
    )
    pods = TimedDeletions(cluster.pods, clock)
    started = clock.monotonic()

    took, failure = timed_drain(drainer(cluster, clock, pods=pods), clock)

    assert sorted(pods.deleted) == ["apps/db-0", "queue/broker-0"]
    assert {p.name for p in cluster.pods.list_on_node("n1")} == {"ledger-0"}
    assert min(pods.deleted_at) - started >= 120  # only once the timeout has passed
    assert took >= 120
    assert failure is not None and failure.blockers == ("payments/ledger-0",)
    assert "deleted without eviction (drain.onTimeout: force): " in str(failure)
    reasons = [(e.reason, e.message) for e in node_events(cluster)]
    assert [reason for reason, _ in reasons].count(FORCED_REASON) == 2
    (not_forced,) = [message for reason, message in reasons if reason == NOT_FORCED_REASON]
    assert "payments/ledger-0" in not_forced and "not in drain.forceNamespaces" in not_forced


def test_force_records_a_node_event_naming_each_forced_pod(
    cluster: InMemoryCluster, clock: SteppingClock
) -> None:
    block(cluster, "apps", "db-0")
    block(cluster, "apps", "db-1")
    apply_drain(cluster, {"timeoutSeconds": 30, "onTimeout": "force", "forceNamespaces": ["apps"]})

    report = drainer(cluster, clock).drain("n1")

    assert report.forced == ["apps/db-0", "apps/db-1"]
    forced = node_events(cluster)
    assert [(e.shadow_name, e.namespace, e.reason, e.type) for e in forced] == [
        ("n1", NODE_EVENT_NAMESPACE, FORCED_REASON, EventType.WARNING)
    ] * 2
    assert "apps/db-0" in forced[0].message and "apps/db-1" in forced[1].message
    assert "30s" in forced[0].message


def test_force_goes_on_as_if_complete_when_every_blocking_pod_was_forced(
    cluster: InMemoryCluster, clock: SteppingClock
) -> None:
    block(cluster, "apps", "db-0")
    apply_drain(cluster, {"timeoutSeconds": 30, "onTimeout": "force", "forceNamespaces": ["apps"]})

    report = drainer(cluster, clock).drain("n1")

    assert report.forced == ["apps/db-0"]
    assert cluster.pods.list_on_node("n1") == []


def test_force_without_listed_namespaces_forces_nothing_and_says_so(
    cluster: InMemoryCluster, clock: SteppingClock
) -> None:
    block(cluster, "apps", "db-0")
    apply_drain(cluster, {"timeoutSeconds": 30, "onTimeout": "force"})
    pods = RecordingPods(cluster.pods)

    with structlog.testing.capture_logs() as lines:
        _took, failure = timed_drain(drainer(cluster, clock, pods=pods), clock)

    assert pods.deleted == []
    assert failure is not None and failure.blockers == ("apps/db-0",)
    (event,) = node_events(cluster)
    assert event.reason == NOT_FORCED_REASON
    assert "lists no namespace" in event.message and "apps/db-0" in event.message
    (line,) = [line for line in lines if line["event"] == "drain.not_forced"]
    assert line["pods"] == ["apps/db-0"] and "lists no namespace" in line["reason"]


def test_skip_returns_the_node_with_its_blocking_pods_as_today(
    cluster: InMemoryCluster, clock: SteppingClock
) -> None:
    block(cluster, "apps", "db-0")
    apply_drain(cluster, {"timeoutSeconds": 30, "onTimeout": "skip", "forceNamespaces": ["apps"]})
    pods = RecordingPods(cluster.pods)

    took, failure = timed_drain(drainer(cluster, clock, pods=pods), clock)

    assert failure is not None and failure.blockers == ("apps/db-0",)
    assert "PodDisruptionBudget apps/db-0-pdb" in str(failure)
    assert pods.deleted == []
    assert node_events(cluster) == []
    assert 30 <= took < ENVIRONMENT_TIMEOUT


def test_without_a_policy_the_environments_timeout_applies_and_nothing_is_forced(
    cluster: InMemoryCluster, clock: SteppingClock
) -> None:
    block(cluster, "apps", "db-0")
    pods = RecordingPods(cluster.pods)

    with structlog.testing.capture_logs() as lines:
        took, failure = timed_drain(drainer(cluster, clock, pods=pods), clock)

    assert failure is not None and f"gave up after {ENVIRONMENT_TIMEOUT:g}s" in str(failure)
    assert ENVIRONMENT_TIMEOUT <= took < ENVIRONMENT_TIMEOUT + TIMINGS.retry_interval_seconds + 1
    assert pods.deleted == [] and node_events(cluster) == []
    absent = [line for line in lines if line["event"] == "drain.policy_absent"]
    assert [line["log_level"] for line in absent] == ["info"]


def test_a_policy_without_a_drain_section_leaves_the_environments_drain(
    cluster: InMemoryCluster, clock: SteppingClock
) -> None:
    block(cluster, "apps", "db-0")
    cluster.policies.apply({"metadata": {"name": "default"}, "spec": {"maxConcurrent": 2}})

    took, failure = timed_drain(drainer(cluster, clock), clock)

    assert failure is not None and f"gave up after {ENVIRONMENT_TIMEOUT:g}s" in str(failure)
    assert took >= ENVIRONMENT_TIMEOUT


def test_a_policy_read_failure_means_the_environments_drain_logged_once_without_traceback(
    cluster: InMemoryCluster, clock: SteppingClock
) -> None:
    unreachable = UnreachablePolicies(cluster.revisions, cluster.namespace)
    block(cluster, "apps", "db-0")
    drain = drainer(cluster, clock, policies=unreachable)

    with structlog.testing.capture_logs() as lines:
        first = timed_drain(drain, clock)
        second = timed_drain(drain, clock)  # far past the cache interval: read (and fail) again

    for took, failure in (first, second):
        assert failure is not None and f"gave up after {ENVIRONMENT_TIMEOUT:g}s" in str(failure)
        assert took >= ENVIRONMENT_TIMEOUT
    (line,) = [line for line in lines if line["event"] == "drain.policy_unreadable"]
    assert line["log_level"] == "warning" and "connection refused" in line["error"]
    assert not any("exc_info" in line or "exception" in line for line in lines)


def test_an_invalid_policy_spec_means_the_environments_drain_logged_once(
    cluster: InMemoryCluster, clock: SteppingClock
) -> None:
    block(cluster, "apps", "db-0")
    apply_drain(cluster, {"timeoutSeconds": 30, "onTimeout": "obliterate"})
    drain = drainer(cluster, clock)

    with structlog.testing.capture_logs() as lines:
        first = timed_drain(drain, clock)
        second = timed_drain(drain, clock)

    for took, failure in (first, second):
        assert failure is not None and took >= ENVIRONMENT_TIMEOUT
    (line,) = [line for line in lines if line["event"] == "drain.policy_invalid"]
    assert line["log_level"] == "warning" and "onTimeout" in line["problem"]
    assert not any("exc_info" in line or "exception" in line for line in lines)


def test_the_policy_is_read_at_most_once_per_cache_interval(
    cluster: InMemoryCluster, clock: SteppingClock
) -> None:
    counting = CountingPolicies(cluster.revisions, cluster.namespace)
    counting.apply({"metadata": {"name": "default"}, "spec": {"drain": {"gracePeriodSeconds": 3}}})
    source = DrainPolicySource(counting, clock, cache_seconds=5)

    first = source.current()
    counting.apply({"metadata": {"name": "default"}, "spec": {"drain": {"gracePeriodSeconds": 9}}})
    clock.advance(4)
    cached = source.current()
    clock.advance(1)
    fresh = source.current()

    assert counting.reads == 2
    assert first is not None and cached is not None and fresh is not None
    assert (first.grace_period_seconds, cached.grace_period_seconds) == (3, 3)
    assert fresh.grace_period_seconds == 9


def test_the_policy_cache_interval_is_bounded(cluster: InMemoryCluster) -> None:
    with pytest.raises(ValueError, match="cache_seconds"):
        DrainPolicySource(cluster.policies, cluster.clock, cache_seconds=3600)


def test_a_drain_that_succeeds_reports_nothing_forced(
    cluster: InMemoryCluster, clock: SteppingClock
) -> None:
    cluster.add_pod("apps", "web-1", "n1")
    apply_drain(cluster, {"onTimeout": "force", "forceNamespaces": ["apps"]})

    report = drainer(cluster, clock).drain("n1")

    assert report == DrainReport("n1", evicted=["apps/web-1"])
    assert node_events(cluster) == []
