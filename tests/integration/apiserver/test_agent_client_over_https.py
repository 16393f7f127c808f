"""The agent's HTTPS client against the real app on loopback HTTPS, over the in-memory cluster."""

from __future__ import annotations

import json
import ssl
import threading
import urllib.request
from dataclasses import replace

import pytest

from brupop.domain import shadow as cluster_side
from brupop.domain.cluster.objects import LB_EXCLUSION_LABEL, OwnerReference, PodPhase
from brupop.domain.host.agent_shadow import AgentShadow, AgentShadowSpec, AgentShadowStatus
from brupop.domain.states import UpdateState
from brupop.ports.errors import NotFoundError
from tests.integration.apiserver.conftest import Rig

STATUS = AgentShadowStatus(
    current_version="1.19.0", target_version="1.19.0", current_state=UpdateState.IDLE
)


def test_agent_creates_reads_and_reports_on_its_shadow(rig: Rig) -> None:
    agent = rig.client("n1")
    assert agent.get() is None

    created = agent.create()
    reported = agent.update_status(STATUS)

    assert created.name == "brs-n1"
    assert (created.node_name, created.node_uid) == ("n1", "uid-n1")
    assert reported.status == STATUS
    assert reported.resource_version != created.resource_version
    stored = rig.cluster.shadows.get("brs-n1")
    assert agent.get() == AgentShadow(
        name=stored.name,
        namespace=stored.namespace,
        node_name=stored.node_name,
        node_uid=stored.node_uid,
        resource_version=stored.resource_version,
        uid=stored.uid,
        spec=AgentShadowSpec.from_json(stored.spec.model_dump(mode="json")),
        status=AgentShadowStatus.from_json(stored.status.model_dump(mode="json"))
        if stored.status
        else None,
    )


def test_creating_an_existing_shadow_returns_the_stored_one(rig: Rig) -> None:
    agent = rig.client("n1")
    first = agent.create()

    assert agent.create() == first


def test_status_for_a_missing_shadow_is_not_found(rig: Rig) -> None:
    with pytest.raises(NotFoundError):
        rig.client("n1").update_status(STATUS)


def test_long_poll_waits_while_nothing_changes_and_answers_at_once_on_change(rig: Rig) -> None:
    agent = rig.client("n1")
    created = agent.create()
    answers: list[AgentShadow | None] = []
    poll = threading.Thread(
        target=lambda: answers.append(agent.wait_for_change(created.resource_version, 30))
    )
    poll.start()
    poll.join(0.3)
    assert poll.is_alive(), "the long-poll answered although nothing changed"

    spec = AgentShadowSpec(state=UpdateState.STAGED_AND_PERFORMED_UPDATE, version="1.20.0")
    rig.cluster.shadows.replace_spec(
        "brs-n1", cluster_side.ShadowSpec(state=spec.state, version=spec.version), None
    )
    poll.join(5)

    assert not poll.is_alive()
    assert answers[0] is not None and answers[0].spec == spec


def test_long_poll_returns_the_unchanged_shadow_at_its_timeout(rig: Rig) -> None:
    agent = rig.client("n1")
    created = agent.create()

    assert agent.wait_for_change(created.resource_version, 0.2) == created


def test_long_poll_right_after_a_status_write_does_not_return_an_older_shadow(rig: Rig) -> None:
    agent = rig.client("n1")
    agent.create()
    for count in range(10):
        reported = agent.update_status(replace(STATUS, crash_count=count))
        answer = agent.wait_for_change(reported.resource_version, 0.05)
        assert answer == reported


def test_long_poll_without_a_shadow_answers_none(rig: Rig) -> None:
    assert rig.client("n1").wait_for_change(None, 0.1) is None


def test_cordon_and_drain_evicts_workloads_and_uncordon_reopens_the_node(rig: Rig) -> None:
    replica_set = (OwnerReference(kind="ReplicaSet", name="web-1", controller=True),)
    rig.cluster.add_pod("default", "web-1-a", "n1", labels={"app": "web"}, owners=replica_set)
    rig.cluster.add_pod("default", "job-1", "n1", phase=PodPhase.SUCCEEDED)
    agent = rig.client("n1")

    agent.cordon_and_drain()
    left = {pod.name for pod in rig.cluster.pods.list_on_node("n1")}
    assert left == {"brupop-agent-n1"}
    assert rig.cluster.nodes.get("n1").unschedulable
    assert [p.name for p in rig.cluster.pods.list_on_node("n2")].count("web-1-r1") == 1

    agent.uncordon()
    assert not rig.cluster.nodes.get("n1").unschedulable


def test_node_cordoned_by_an_administrator_stays_cordoned_after_the_update(rig: Rig) -> None:
    rig.cluster.nodes.set_unschedulable("n1", True)
    agent = rig.client("n1")

    agent.cordon_and_drain()
    agent.uncordon()

    assert rig.cluster.nodes.get("n1").unschedulable


def test_load_balancer_exclusion_round_trip(rig: Rig) -> None:
    agent = rig.client("n1")

    agent.exclude_from_load_balancers()
    assert rig.cluster.nodes.get("n1").labels[LB_EXCLUSION_LABEL] == "True"
    agent.restore_to_load_balancers()
    assert LB_EXCLUSION_LABEL not in rig.cluster.nodes.get("n1").labels


def test_the_client_learns_its_node_uid_from_the_apiserver(rig: Rig) -> None:
    assert rig.client("n2").node_uid() == "uid-n2"


def test_ping_metrics_and_crdconvert_need_no_token(rig: Rig) -> None:
    context = ssl.create_default_context(cafile=str(rig.certs.ca_path))

    def fetch(path: str, body: bytes | None = None) -> tuple[int, bytes]:
        request = urllib.request.Request(rig.server.base_url + path, data=body)
        with urllib.request.urlopen(request, context=context, timeout=60) as response:
            return response.status, response.read()

    rig.client("n1").create()

    assert fetch("/ping") == (200, b"pong")
    status, metrics = fetch("/metrics")
    assert status == 200
    assert b'brupop_apiserver_requests_total{method="POST",route="/bottlerocket-node-resource"' in (
        metrics
    )
    assert b'brupop_apiserver_authorizations_total{outcome="allowed"} 2.0' in metrics
    assert b"brupop_apiserver_drains_in_progress 0.0" in metrics
    review = {
        "apiVersion": "apiextensions.k8s.io/v1",
        "kind": "ConversionReview",
        "request": {"uid": "r1", "desiredAPIVersion": "brupop.bottlerocket.aws/v2", "objects": []},
    }
    status, answer = fetch("/crdconvert", json.dumps(review).encode())
    assert status == 200
    assert json.loads(answer)["response"]["result"]["status"] == "Success"
