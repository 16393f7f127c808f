"""Kubernetes error answers (Status bodies) become the ports' typed errors, never raw exceptions."""

from __future__ import annotations

import re

import kmock
import pytest

from brupop.adapters.kubernetes.api.errors import retry_after_seconds
from brupop.adapters.kubernetes.cluster import KubernetesCluster
from brupop.domain.cluster.objects import ClusterEvent
from brupop.domain.shadow import ShadowStatus
from brupop.domain.states import UpdateState
from brupop.ports.errors import (
    AlreadyExistsError,
    ConflictError,
    ForbiddenError,
    InvalidObjectError,
    NotFoundError,
    PortError,
    ThrottledError,
    TooManyRequestsError,
    UnauthorizedError,
    UnavailableError,
    WatchExpiredError,
)
from tests.contract.kubernetes.conftest import NAMESPACE, SHADOWS_PATH, status
from tests.support.kube_emulator import KubeEmulator
from tests.support.kube_emulator_server import EmulatorServer

STATUS = ShadowStatus(
    current_version="1.6.1", target_version="1.8.0", current_state=UpdateState.IDLE
)


def test_404_is_not_found_with_the_apiservers_message(
    kube: KubernetesCluster, emulator: KubeEmulator
) -> None:
    with pytest.raises(
        NotFoundError,
        match=re.escape('bottlerocketshadows.brupop.bottlerocket.aws "brs-x" not found'),
    ):
        kube.shadows.get("brs-x")


def test_409_already_exists_and_409_conflict_are_told_apart_by_reason(
    kube: KubernetesCluster, emulator: KubeEmulator
) -> None:
    kube.shadows.create("node-a", "uid-a")
    with pytest.raises(AlreadyExistsError):
        kube.shadows.create("node-a", "uid-a")

    (
        emulator[f"patch {SHADOWS_PATH}/brs-node-a"]
        << 409
        << status(409, "Conflict", "the object has been modified")
    )
    with pytest.raises(ConflictError) as caught:
        kube.shadows.replace_spec("brs-node-a", kube.shadows.get("brs-node-a").spec, "1")
    assert not isinstance(caught.value, AlreadyExistsError)


def test_410_on_opening_a_watch_is_watch_expired(
    kube: KubernetesCluster, emulator: KubeEmulator
) -> None:
    (
        emulator[f"get {SHADOWS_PATH}"]
        << 410
        << status(410, "Expired", "too old resource version: 1 (90)")
    )
    with pytest.raises(WatchExpiredError, match="too old resource version"):
        list(kube.shadows.watch("1", 1.0))


@pytest.mark.parametrize(
    ("code", "reason", "expected"),
    [
        (422, "Invalid", InvalidObjectError),
        (400, "BadRequest", InvalidObjectError),
        (401, "Unauthorized", UnauthorizedError),
        (429, "TooManyRequests", ThrottledError),
        (500, "InternalError", UnavailableError),
        (503, "ServiceUnavailable", UnavailableError),
    ],
)
def test_status_codes_map_to_typed_errors(
    kube: KubernetesCluster,
    emulator: KubeEmulator,
    code: int,
    reason: str,
    expected: type[PortError],
) -> None:
    kube.shadows.create("node-a", "uid-a")
    emulator[f"patch {SHADOWS_PATH}/brs-node-a/status"] << code << status(code, reason, "refused")

    with pytest.raises(expected, match=f"update status of shadow 'brs-node-a': {code} {reason}"):
        kube.shadows.update_status("brs-node-a", STATUS)


def test_a_403_names_the_verb_the_resource_and_the_caller_in_one_line(
    kube: KubernetesCluster, emulator: KubeEmulator
) -> None:
    message = (
        'nodes is forbidden: User "system:serviceaccount:brupop:controller" cannot list '
        'resource "nodes" in API group "" at the cluster scope'
    )
    emulator["get /api/v1/nodes"] << 403 << status(403, "Forbidden", message)

    with pytest.raises(ForbiddenError) as refused:
        kube.nodes.list()

    assert str(refused.value) == (
        "list nodes: forbidden: list nodes (cluster-wide) "
        "for system:serviceaccount:brupop:controller"
    )


def test_a_403_in_a_namespace_names_its_api_group_and_namespace(
    kube: KubernetesCluster, emulator: KubeEmulator
) -> None:
    kube.shadows.create("node-a", "uid-a")
    message = (
        'bottlerocketshadows.brupop.bottlerocket.aws "brs-node-a" is forbidden: User "sa" cannot '
        'patch resource "bottlerocketshadows/status" in API group "brupop.bottlerocket.aws" in '
        'the namespace "brupop-bottlerocket-aws"'
    )
    emulator[f"patch {SHADOWS_PATH}/brs-node-a/status"] << 403 << status(403, "Forbidden", message)

    with pytest.raises(ForbiddenError) as refused:
        kube.shadows.update_status("brs-node-a", STATUS)

    assert str(refused.value) == (
        "update status of shadow 'brs-node-a': forbidden: patch bottlerocketshadows/status in API "
        "group brupop.bottlerocket.aws (in namespace brupop-bottlerocket-aws) for sa"
    )


def test_a_403_in_other_words_keeps_the_apis_message(
    kube: KubernetesCluster, emulator: KubeEmulator
) -> None:
    emulator["get /api/v1/nodes"] << 403 << status(403, "Forbidden", "denied by a webhook")

    with pytest.raises(ForbiddenError) as refused:
        kube.nodes.list()

    assert str(refused.value) == "list nodes: forbidden: denied by a webhook"


def test_eviction_refused_by_a_budget_is_too_many_requests(
    kube: KubernetesCluster, emulator: KubeEmulator
) -> None:
    emulator.add_node("node-a")
    emulator.add_pod("default", "db-0", "node-a", labels={"app": "db"})
    emulator.add_disruption_budget("default", "db", {"app": "db"}, min_available=1)

    with pytest.raises(TooManyRequestsError, match="disruption budget"):
        kube.pods.evict("default", "db-0")


def test_a_429_that_names_no_budget_is_throttling_with_its_retry_after_not_a_refusal(
    kube: KubernetesCluster, emulator: KubeEmulator
) -> None:
    emulator.add_node("node-a")
    emulator.add_pod("default", "db-0", "node-a", labels={"app": "db"})
    (
        emulator["post /api/v1/namespaces/default/pods/db-0/eviction"]
        << 429
        << kmock.headers({"Retry-After": "3"})
        << status(429, "TooManyRequests", "Too many requests, please try again later.")
    )

    with pytest.raises(ThrottledError) as caught:
        kube.pods.evict("default", "db-0")
    assert not isinstance(caught.value, TooManyRequestsError)
    assert caught.value.retry_after_seconds == 3.0


def test_a_retry_after_that_is_huge_or_not_a_number_is_bounded_or_ignored() -> None:
    assert retry_after_seconds("86400") == 60.0
    assert retry_after_seconds("Wed, 21 Oct 2015 07:28:00 GMT") is None
    assert retry_after_seconds("²") is None
    assert retry_after_seconds(None) is None


def test_pod_under_two_budgets_cannot_be_evicted_and_it_is_a_server_failure(
    kube: KubernetesCluster, emulator: KubeEmulator
) -> None:
    emulator.add_node("node-a")
    emulator.add_pod("default", "db-0", "node-a", labels={"app": "db"})
    emulator.add_disruption_budget("default", "db", {"app": "db"}, min_available=0)
    emulator.add_disruption_budget("default", "db-too", {"app": "db"}, min_available=0)

    with pytest.raises(UnavailableError, match="more than one PodDisruptionBudget"):
        kube.pods.evict("default", "db-0")


def test_an_unreachable_api_is_unavailable() -> None:
    with EmulatorServer() as stopped:
        client = stopped.api_client()
    cluster = KubernetesCluster(client, NAMESPACE)

    with pytest.raises(UnavailableError, match="did not answer"):
        cluster.nodes.get("node-a")
    with pytest.raises(UnavailableError):
        cluster.token_reviewer.review("token", ("brupop-apiserver",))


def test_an_answer_that_is_not_json_is_unavailable(
    kube: KubernetesCluster, emulator: KubeEmulator
) -> None:
    emulator["get /api/v1/nodes/node-a"] << 200 << b"<html>proxy error</html>"
    with pytest.raises(UnavailableError, match="other than JSON"):
        kube.nodes.get("node-a")


def test_failed_token_review_is_unavailable(
    kube: KubernetesCluster, emulator: KubeEmulator
) -> None:
    (
        emulator["post /apis/authentication.k8s.io/v1/tokenreviews"]
        << 500
        << status(500, "InternalError", "webhook authenticator down")
    )
    with pytest.raises(UnavailableError, match="webhook authenticator down"):
        kube.token_reviewer.review("token", ("brupop-apiserver",))


def test_event_recording_failure_is_swallowed(
    kube: KubernetesCluster, emulator: KubeEmulator
) -> None:
    (
        emulator[f"post /api/v1/namespaces/{NAMESPACE}/events"]
        << 403
        << status(403, "Forbidden", 'events is forbidden: User "x" cannot create resource "events"')
    )

    kube.events.record(ClusterEvent("brs-node-a", NAMESPACE, "UpdateStarted", "to 1.20.0"))

    assert emulator.requests[-1].url.path == f"/api/v1/namespaces/{NAMESPACE}/events"
