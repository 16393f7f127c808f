"""`drain.forceNamespaces` cannot reach the cluster's own namespaces: a policy that lists
`kube-system`, `kube-public`, `kube-node-lease` or brupop's namespace stays valid, but the
apiserver never force-deletes pods there unless APISERVER_FORCE_NAMESPACES_ALLOWED lists them;
it says so once in its log, and in the Node's DrainNotForced Event at the timeout."""

from __future__ import annotations

from collections.abc import Iterable

import pytest
import structlog

from brupop.adapters.memory.cluster import InMemoryCluster
from brupop.domain.cluster.objects import EventSubject
from brupop.domain.policy.drain_rules import (
    CLUSTER_NAMESPACES,
    ForceAllowanceError,
    drain_rules,
    protected_namespaces,
    read_force_allowance,
)
from brupop.domain.policy.scheduling_policy import DrainSpec, OnDrainTimeout
from brupop.ports.errors import DrainFailedError
from brupop.services.apiserver.drain.drainer import Drainer
from brupop.services.apiserver.drain.forced_removal import NOT_FORCED_REASON, ForcedRemoval
from brupop.services.apiserver.drain.node_actions import NodeActions
from brupop.services.apiserver.drain.policy_source import DrainPolicySource
from tests.unit.services.apiserver.drain_fakes import TIMINGS, RecordingPods, SteppingClock

OWN = "brupop-bottlerocket-aws"
PROTECTED = ["kube-system", "kube-public", "kube-node-lease", OWN]


def block(cluster: InMemoryCluster, namespace: str, name: str) -> None:
    """A pod on n1 that its PodDisruptionBudget never lets go."""
    cluster.add_pod(namespace, name, "n1", labels={"app": name})
    cluster.add_disruption_budget(namespace, f"{name}-pdb", {"app": name}, min_available=1)


def force_after_ten_seconds(cluster: InMemoryCluster, namespaces: Iterable[str]) -> None:
    drain = {"timeoutSeconds": 10, "onTimeout": "force", "forceNamespaces": list(namespaces)}
    cluster.policies.apply({"metadata": {"name": "default"}, "spec": {"drain": drain}})


def drainer(
    cluster: InMemoryCluster, clock: SteppingClock, pods: RecordingPods, allowed: Iterable[str]
) -> Drainer:
    source = DrainPolicySource(
        cluster.policies, clock, protected_namespaces=protected_namespaces(OWN, allowed)
    )
    return Drainer(
        actions=NodeActions(cluster.nodes),
        pods=pods,
        clock=clock,
        timings=TIMINGS,
        policy=source,
        forced=ForcedRemoval(pods, cluster.events),
    )


def drain_n1(drain: Drainer) -> DrainFailedError | None:
    try:
        drain.drain("n1")
    except DrainFailedError as failure:
        return failure
    return None


def test_force_never_deletes_pods_in_the_clusters_or_brupops_namespaces(
    cluster: InMemoryCluster, clock: SteppingClock
) -> None:
    for namespace in [*PROTECTED, "apps"]:
        block(cluster, namespace, "blocker")
    force_after_ten_seconds(cluster, [*PROTECTED, "apps"])
    pods = RecordingPods(cluster.pods)

    failure = drain_n1(drainer(cluster, clock, pods, allowed=()))

    assert pods.deleted == ["apps/blocker"]
    assert failure is not None
    assert sorted(failure.blockers) == sorted(f"{namespace}/blocker" for namespace in PROTECTED)


def test_the_node_event_says_which_pods_are_protected_and_what_lifts_it(
    cluster: InMemoryCluster, clock: SteppingClock
) -> None:
    block(cluster, "kube-system", "coredns-0")
    block(cluster, "payments", "ledger-0")
    force_after_ten_seconds(cluster, ["kube-system", "apps"])

    drain_n1(drainer(cluster, clock, RecordingPods(cluster.pods), allowed=()))

    (event,) = [e for e in cluster.events.recorded if e.subject is EventSubject.NODE]
    assert event.reason == NOT_FORCED_REASON
    assert (
        "kube-system/coredns-0 (namespace kube-system is the cluster's or brupop's own: never "
        "forced unless the apiserver's APISERVER_FORCE_NAMESPACES_ALLOWED lists it)"
    ) in event.message
    assert "payments/ledger-0 (not in drain.forceNamespaces apps, kube-system)" in event.message


def test_a_namespace_the_setting_allows_is_forced(
    cluster: InMemoryCluster, clock: SteppingClock
) -> None:
    block(cluster, "kube-system", "coredns-0")
    block(cluster, OWN, "brupop-controller-0")
    force_after_ten_seconds(cluster, ["kube-system", OWN])
    pods = RecordingPods(cluster.pods)

    failure = drain_n1(drainer(cluster, clock, pods, allowed=["kube-system"]))

    assert pods.deleted == ["kube-system/coredns-0"]
    assert failure is not None and failure.blockers == (f"{OWN}/brupop-controller-0",)


def test_a_policy_forcing_protected_namespaces_stays_in_force_and_is_warned_about_once(
    cluster: InMemoryCluster, clock: SteppingClock
) -> None:
    block(cluster, "kube-system", "coredns-0")
    force_after_ten_seconds(cluster, ["kube-system", "apps"])
    drain = drainer(cluster, clock, RecordingPods(cluster.pods), allowed=())

    with structlog.testing.capture_logs() as lines:
        first = drain_n1(drain)
        second = drain_n1(drain)  # past the cache interval: the policy is read again

    for failure in (first, second):
        assert failure is not None and "gave up after 10s" in str(failure)  # the policy's
    warned = [line for line in lines if line["event"] == "drain.force_namespaces_refused"]
    assert [(line["log_level"], line["namespaces"]) for line in warned] == [
        ("warning", ["kube-system"])
    ]
    assert "APISERVER_FORCE_NAMESPACES_ALLOWED" in warned[0]["reason"]
    assert not any(line["event"] == "drain.policy_invalid" for line in lines)


def test_a_policy_that_skips_at_the_timeout_is_not_warned_about(
    cluster: InMemoryCluster, clock: SteppingClock
) -> None:
    drain = {"timeoutSeconds": 10, "onTimeout": "skip", "forceNamespaces": ["kube-system"]}
    cluster.policies.apply({"metadata": {"name": "default"}, "spec": {"drain": drain}})
    source = DrainPolicySource(cluster.policies, clock)

    with structlog.testing.capture_logs() as lines:
        source.rules(60.0)

    assert not any(line["event"] == "drain.force_namespaces_refused" for line in lines)


def test_without_a_protected_set_the_cluster_namespaces_are_still_protected() -> None:
    policy = DrainSpec(on_timeout=OnDrainTimeout.FORCE, force_namespaces=("kube-system",))

    rules = drain_rules(policy, 60.0)

    assert rules.protected_namespaces == CLUSTER_NAMESPACES
    assert rules.refused_namespaces == {"kube-system"}


def test_brupops_own_namespace_is_protected_and_the_allowance_lifts_any_of_them() -> None:
    assert protected_namespaces("ops") == CLUSTER_NAMESPACES | {"ops"}
    assert protected_namespaces("ops", {"ops", "kube-public"}) == {"kube-system", "kube-node-lease"}


def test_the_allowance_reads_namespace_names_separated_by_commas_or_spaces() -> None:
    assert read_force_allowance("") == frozenset()
    assert read_force_allowance(" kube-system, kube-public  ops,") == {
        "kube-system",
        "kube-public",
        "ops",
    }


@pytest.mark.parametrize(
    "text", ["Kube-System", "kube_system", "-a", "a" * 64, "a," * 51, "x" * 5000, "ns/pod"]
)
def test_an_allowance_that_is_not_namespace_names_is_refused(text: str) -> None:
    with pytest.raises(ForceAllowanceError):
        read_force_allowance(text)
