"""The exact requests the node, pod, token, lease and event adapters send."""

from __future__ import annotations

from datetime import UTC, datetime
from typing import Any

from brupop.adapters.kubernetes.cluster import KubernetesCluster
from brupop.domain.cluster.objects import (
    NODE_EVENT_NAMESPACE,
    ClusterEvent,
    EventSubject,
    EventType,
    Lease,
)
from brupop.domain.policy.update_policy import UpdatePolicySpec
from tests.contract.kubernetes.conftest import NAMESPACE, Sent, sent
from tests.support.kube_api_rules import KINDS
from tests.support.kube_emulator import KubeEmulator

MERGE = "application/merge-patch+json"
JSON = "application/json"


def test_node_reads_and_changes(kube: KubernetesCluster, emulator: KubeEmulator) -> None:
    emulator.add_node("node-a")

    kube.nodes.get("node-a")
    kube.nodes.list({"bottlerocket.aws/updater-interface-version": "2.0.0", "zone": "a"})
    kube.nodes.set_unschedulable("node-a", True)
    kube.nodes.set_unschedulable("node-a", False)
    kube.nodes.set_labels(
        "node-a", {"node.kubernetes.io/exclude-from-external-load-balancers": None}
    )
    kube.nodes.set_annotations("node-a", {"brupop.bottlerocket.aws/cordoned-by-brupop": "true"})

    node = "/api/v1/nodes/node-a"
    selector = "bottlerocket.aws/updater-interface-version=2.0.0,zone=a"
    assert sent(emulator) == [
        Sent("GET", node, {}, JSON, None),
        Sent("GET", "/api/v1/nodes", {"labelSelector": selector, "limit": "500"}, JSON, None),
        Sent("PATCH", node, {}, MERGE, {"spec": {"unschedulable": True}}),
        Sent("PATCH", node, {}, MERGE, {"spec": {"unschedulable": None}}),
        Sent(
            "PATCH",
            node,
            {},
            MERGE,
            {
                "metadata": {
                    "labels": {"node.kubernetes.io/exclude-from-external-load-balancers": None}
                }
            },
        ),
        Sent(
            "PATCH",
            node,
            {},
            MERGE,
            {"metadata": {"annotations": {"brupop.bottlerocket.aws/cordoned-by-brupop": "true"}}},
        ),
    ]


def test_pod_listing_eviction_and_deletion(kube: KubernetesCluster, emulator: KubeEmulator) -> None:
    emulator.add_node("node-a")
    emulator.add_pod("default", "web-1", "node-a")
    emulator.add_pod("default", "job-1", "node-a", phase="Succeeded")

    kube.pods.list_on_node("node-a")
    kube.pods.get("default", "web-1")
    kube.pods.evict("default", "web-1")
    kube.pods.delete("default", "job-1")
    kube.pods.list_disruption_budgets("default")

    assert sent(emulator) == [
        Sent(
            "GET",
            "/api/v1/pods",
            {"fieldSelector": "spec.nodeName=node-a", "limit": "500"},
            JSON,
            None,
        ),
        Sent("GET", "/api/v1/namespaces/default/pods/web-1", {}, JSON, None),
        Sent(
            "POST",
            "/api/v1/namespaces/default/pods/web-1/eviction",
            {},
            JSON,
            {
                "apiVersion": "policy/v1",
                "kind": "Eviction",
                "metadata": {"name": "web-1", "namespace": "default"},
            },
        ),
        Sent("DELETE", "/api/v1/namespaces/default/pods/job-1", {}, JSON, None),
        Sent("GET", "/apis/policy/v1/namespaces/default/poddisruptionbudgets", {}, JSON, None),
    ]


def test_the_census_lists_pods_and_budgets_from_the_watch_cache_without_finished_pods(
    kube: KubernetesCluster, emulator: KubeEmulator
) -> None:
    kube.pods.list_all()
    kube.pods.list_all_disruption_budgets()

    unfinished = "status.phase!=Succeeded,status.phase!=Failed"
    cached = {"resourceVersion": "0", "limit": "500"}
    assert sent(emulator) == [
        Sent("GET", "/api/v1/pods", {"fieldSelector": unfinished} | cached, JSON, None),
        Sent("GET", "/apis/policy/v1/poddisruptionbudgets", cached, JSON, None),
    ]


def test_a_cached_census_list_answered_in_one_piece_despite_its_limit_is_complete(
    kube: KubernetesCluster, emulator: KubeEmulator
) -> None:
    emulator.add_node("node-a")
    for n in range(501):  # more than a page: the cache answers them all, with no continue
        emulator.add_pod("default", f"web-{n}", "node-a")

    pods = kube.pods.list_all()

    assert len(pods) == 501
    assert len(sent(emulator)) == 1


def test_a_cached_census_list_that_is_paged_anyway_is_followed_without_its_version(
    kube: KubernetesCluster, emulator: KubeEmulator
) -> None:
    _two_pages_of_pods(emulator)

    pods = kube.pods.list_all()

    assert [p.name for p in pods] == ["web-1", "web-2"]
    first, then = (request.query for request in sent(emulator))
    assert first["resourceVersion"] == "0"
    assert then == {
        "fieldSelector": "status.phase!=Succeeded,status.phase!=Failed",
        "limit": "500",
        "continue": "120:0",
    }


def test_a_drains_reads_of_a_nodes_pods_stay_consistent_reads(
    kube: KubernetesCluster, emulator: KubeEmulator
) -> None:
    kube.pods.list_on_node("node-a")
    kube.pods.list_disruption_budgets("default")

    assert all("resourceVersion" not in request.query for request in sent(emulator))


def test_an_eviction_with_a_grace_period_sends_it_as_delete_options(
    kube: KubernetesCluster, emulator: KubeEmulator
) -> None:
    emulator.add_node("node-a")
    emulator.add_pod("default", "web-1", "node-a")

    kube.pods.evict("default", "web-1", grace_period_seconds=30)

    (eviction,) = sent(emulator)
    assert (eviction.method, eviction.path) == (
        "POST",
        "/api/v1/namespaces/default/pods/web-1/eviction",
    )
    assert eviction.body["deleteOptions"] == {"gracePeriodSeconds": 30}


def test_pods_on_a_node_are_read_page_by_page(
    kube: KubernetesCluster, emulator: KubeEmulator
) -> None:
    _two_pages_of_pods(emulator)

    pods = kube.pods.list_on_node("node-a")

    assert [p.name for p in pods] == ["web-1", "web-2"]
    assert sent(emulator)[-1].query == {
        "fieldSelector": "spec.nodeName=node-a",
        "limit": "500",
        "continue": "120:0",
    }


def test_token_review_posts_token_and_audiences(
    kube: KubernetesCluster, emulator: KubeEmulator
) -> None:
    kube.token_reviewer.review("eyJhbGciOi.token", ("brupop-apiserver",))

    assert sent(emulator) == [
        Sent(
            "POST",
            "/apis/authentication.k8s.io/v1/tokenreviews",
            {},
            JSON,
            {
                "apiVersion": "authentication.k8s.io/v1",
                "kind": "TokenReview",
                "spec": {"token": "eyJhbGciOi.token", "audiences": ["brupop-apiserver"]},
            },
        )
    ]


def test_token_review_reads_pod_and_node_from_user_extra(
    kube: KubernetesCluster, emulator: KubeEmulator
) -> None:
    answer = {
        "apiVersion": "authentication.k8s.io/v1",
        "kind": "TokenReview",
        "status": {
            "authenticated": True,
            "user": {
                "username": "system:serviceaccount:brupop-bottlerocket-aws:brupop-agent",
                "extra": {
                    "authentication.kubernetes.io/pod-name": ["brupop-agent-x9x5c"],
                    "authentication.kubernetes.io/pod-uid": ["8d1c0a6e"],
                    "authentication.kubernetes.io/node-name": ["node-a"],
                },
            },
            "audiences": ["brupop-apiserver"],
        },
    }
    emulator["post /apis/authentication.k8s.io/v1/tokenreviews"] << 201 << answer

    identity = kube.token_reviewer.review("token", ("brupop-apiserver",))

    assert identity.authenticated
    assert identity.username == "system:serviceaccount:brupop-bottlerocket-aws:brupop-agent"
    assert (identity.pod_name, identity.pod_uid, identity.node_name) == (
        "brupop-agent-x9x5c",
        "8d1c0a6e",
        "node-a",
    )


def test_token_bound_to_several_pods_names_none(
    kube: KubernetesCluster, emulator: KubeEmulator
) -> None:
    answer = {
        "status": {
            "authenticated": True,
            "user": {
                "username": "x",
                "extra": {"authentication.kubernetes.io/pod-name": ["a", "b"]},
            },
        }
    }
    emulator["post /apis/authentication.k8s.io/v1/tokenreviews"] << 201 << answer

    assert kube.token_reviewer.review("token", ("brupop-apiserver",)).pod_name is None


def test_lease_create_and_replace_with_micro_time(
    kube: KubernetesCluster, emulator: KubeEmulator
) -> None:
    moment = datetime(2026, 1, 5, 10, 0, 0, 250000, tzinfo=UTC)
    lease = Lease("brupop-controller", NAMESPACE, "controller-1", 15, moment, moment, 0)

    created = kube.leases.create(lease)
    kube.leases.replace(created)

    spec = {
        "holderIdentity": "controller-1",
        "leaseDurationSeconds": 15,
        "acquireTime": "2026-01-05T10:00:00.250000Z",
        "renewTime": "2026-01-05T10:00:00.250000Z",
        "leaseTransitions": 0,
    }
    leases = f"/apis/coordination.k8s.io/v1/namespaces/{NAMESPACE}/leases"
    head = {"apiVersion": "coordination.k8s.io/v1", "kind": "Lease"}
    meta = {"name": "brupop-controller", "namespace": NAMESPACE}
    assert sent(emulator) == [
        Sent("POST", leases, {}, JSON, head | {"metadata": meta, "spec": spec}),
        Sent(
            "PUT",
            f"{leases}/brupop-controller",
            {},
            JSON,
            head | {"metadata": meta | {"resourceVersion": created.resource_version}, "spec": spec},
        ),
    ]


def test_event_names_the_shadow_with_its_uid_so_describe_finds_it(
    kube: KubernetesCluster, emulator: KubeEmulator
) -> None:
    shadow = kube.shadows.create("node-a", "uid-a")

    kube.events.record(
        ClusterEvent("brs-node-a", NAMESPACE, "Drained", "3 pods evicted", EventType.NORMAL)
    )

    lookup, post = sent(emulator)[-2:]
    assert (lookup.method, lookup.path) == (
        "GET",
        f"/apis/brupop.bottlerocket.aws/v2/namespaces/{NAMESPACE}/bottlerocketshadows/brs-node-a",
    )
    assert (post.method, post.path) == ("POST", f"/api/v1/namespaces/{NAMESPACE}/events")
    body = post.body
    assert body["metadata"]["name"].startswith("brs-node-a.")
    assert body["involvedObject"] == {
        "apiVersion": "brupop.bottlerocket.aws/v2",
        "kind": "BottlerocketShadow",
        "name": "brs-node-a",
        "namespace": NAMESPACE,
        "uid": shadow.uid,
    }
    assert (body["reason"], body["message"], body["type"]) == (
        "Drained",
        "3 pods evicted",
        "Normal",
    )
    assert body["source"] == {"component": "brupop-controller"}
    assert body["count"] == 1
    assert body["firstTimestamp"] == body["lastTimestamp"]
    assert len(emulator.objects_of(KINDS["", "v1", "events"])) == 1


def test_an_event_about_the_policy_names_the_policy_so_describe_brp_finds_it(
    kube: KubernetesCluster, emulator: KubeEmulator
) -> None:
    policy = kube.policies.create(UpdatePolicySpec(paused=True))

    kube.events.record(
        ClusterEvent(
            "default",
            NAMESPACE,
            "PolicyInvalid",
            "cannot be used",
            EventType.WARNING,
            EventSubject.UPDATE_POLICY,
        )
    )

    lookup, post = sent(emulator)[-2:]
    assert (lookup.method, lookup.path) == (
        "GET",
        f"/apis/brupop.bottlerocket.aws/v1/namespaces/{NAMESPACE}/bottlerocketupdatepolicies/default",
    )
    assert post.body["involvedObject"] == {
        "apiVersion": "brupop.bottlerocket.aws/v1",
        "kind": "BottlerocketUpdatePolicy",
        "name": "default",
        "namespace": NAMESPACE,
        "uid": policy.uid,
    }


def test_an_event_about_a_node_goes_to_the_default_namespace_naming_the_node_and_its_uid(
    kube: KubernetesCluster, emulator: KubeEmulator
) -> None:
    node = emulator.add_node("node-a")

    kube.events.record(
        ClusterEvent(
            "node-a",
            NODE_EVENT_NAMESPACE,
            "DrainForcedPodDeletion",
            "Deleted pod apps/db-0 without eviction",
            EventType.WARNING,
            EventSubject.NODE,
        )
    )

    lookup, post = sent(emulator)[-2:]
    assert (lookup.method, lookup.path) == ("GET", "/api/v1/nodes/node-a")
    assert (post.method, post.path) == ("POST", "/api/v1/namespaces/default/events")
    assert post.body["metadata"]["namespace"] == "default"
    assert post.body["involvedObject"] == {
        "apiVersion": "v1",
        "kind": "Node",
        "name": "node-a",
        "uid": node["metadata"]["uid"],
    }


def _two_pages_of_pods(emulator: KubeEmulator) -> None:
    """Pods on node-a read in two pages: web-1 in a first page answered once, whose continue
    token is in the emulator's own form (a real server refuses a token it never issued), then
    web-2 from the emulator."""
    first_page: dict[str, Any] = {
        "kind": "PodList",
        "apiVersion": "v1",
        "metadata": {"resourceVersion": "120", "continue": "120:0"},
        "items": [
            {"metadata": {"name": "web-1", "namespace": "default"}, "spec": {"nodeName": "node-a"}}
        ],
    }
    emulator["get /api/v1/pods"][:1] << 200 << first_page
    emulator.add_pod("default", "web-2", "node-a")
