"""A whole rollout through the Kubernetes adapters: `brupop apiserver` and `brupop controller`
processes reach the cluster only through a kubeconfig, over HTTP to the Kubernetes API
emulator (a process of its own, so a loaded test process does not slow its answers), and one
`brupop agent` process per node drives its emulated host.

Watches, the controller's Lease, TokenReviews, evictions (one refused by a 429 first) and a
real conflict on every shadow's first spec write cross the wire; a watch of the shadows (also
over the wire) checks that the concurrency limit holds at every step.
"""

from __future__ import annotations

from collections.abc import Callable, Iterator
from contextlib import ExitStack
from dataclasses import dataclass
from pathlib import Path
from typing import Any

import pytest

from brupop.adapters.kubernetes.api.calls import ApiCalls
from brupop.adapters.kubernetes.resources.shadows import KubernetesShadowRepository
from brupop.cli.fleet_description.nodes import SimulatedNode
from brupop.domain.cluster.objects import LB_EXCLUSION_LABEL, WatchBookmark, WatchEvent
from brupop.domain.shadow import Shadow
from brupop.services.controller.runtime.leader_election import DEFAULT_LEASE_NAME
from brupop.simulation.flags.options import SimulationOptions
from brupop.simulation.flags.timing import Component
from brupop.simulation.fleet.agent_env import agent_argv, agent_env, default_apiclient
from brupop.simulation.fleet.certificates import TlsFiles, write_loopback_tls
from brupop.simulation.fleet.observer import FleetObserver
from brupop.simulation.fleet.supervisor import AgentSpec, AgentSupervisor
from brupop.simulation.outcome.host_state import read_host_facts
from tests.e2e.kube_fleet import (
    NAMESPACE,
    WORKLOADS,
    BrupopProcess,
    add_fleet,
    cluster_env,
    fleet_files,
    wait_for_ping,
    web_pod,
    write_kubeconfig,
)
from tests.support.kube_api_rules import KINDS, NODES, PODS, SHADOWS, status_body
from tests.support.kube_emulator import KubeEmulator
from tests.support.kube_emulator_process import EmulatorProcess, Recorded
from tests.support.polling import wait_until
from tests.support.ports import free_port

OPTIONS = SimulationOptions(nodes=3, max_concurrent=2)
NAMES = OPTIONS.node_names()
TARGET = OPTIONS.to_version
LEASES = KINDS["coordination.k8s.io", "v1", "leases"]
SHADOWS_PATH = f"/apis/brupop.bottlerocket.aws/v2/namespaces/{NAMESPACE}/bottlerocketshadows"
TOKEN_REVIEWS = "/apis/authentication.k8s.io/v1/tokenreviews"
CONTROLLER_NODE = "control-plane-1"
ROLLOUT_SECONDS = 480.0  # far above a healthy run (about 20 s); a loaded machine is not a failure
START_SECONDS = 60.0
OBSERVER_WATCH_SECONDS = 5.0
# Limits, not paces: the simulated fleet's (a 2 s Lease, 15 to 40 s step limits, 5 s calls) suit
# an idle machine; on a loaded one every process answers late, so here each limit is generous.
PATIENT_CONTROLLER = {
    "LEADER_ELECTION_LEASE_SECONDS": "15",
    "LEADER_ELECTION_RENEW_SECONDS": "5",
    "TIMEOUT_IDLE_SECONDS": "300",
    "TIMEOUT_STAGED_AND_PERFORMED_UPDATE_SECONDS": "300",
    "TIMEOUT_REBOOTED_INTO_UPDATE_SECONDS": "300",
    "TIMEOUT_MONITORING_UPDATE_SECONDS": "300",
}
PATIENT_APISERVER = {"DRAIN_TIMEOUT_SECONDS": "120", "POD_DELETION_TIMEOUT_SECONDS": "60"}
PATIENT_AGENT = {
    "APISERVER_CLIENT_TIMEOUT_SECONDS": "20",
    "HOST_COMMAND_DEADLINE_SECONDS": "30",
    "DRAIN_TIMEOUT_SECONDS": "120",
}
# The test's own deadlines fail first, with what each process said; pytest's only after them.
pytestmark = pytest.mark.timeout(ROLLOUT_SECONDS + 4 * START_SECONDS + 60)


@dataclass
class Rollout:
    """What one run started: to watch it, stop it, and explain a failure."""

    emulator: EmulatorProcess
    observer: FleetObserver
    supervisor: AgentSupervisor
    apiserver: BrupopProcess
    controller: BrupopProcess
    fleet: list[SimulatedNode]
    log_dir: Path

    def explain(self) -> str:
        views = "\n".join(str(view) for view in self.observer.views().values())
        agents = [
            f"--- {name}\n" + "\n".join(path.read_text(errors="replace").splitlines()[-20:])
            for name in NAMES
            if (path := self.log_dir / f"{name}.log").exists()
        ]
        processes = [self.apiserver.tail(), self.controller.tail(), self.emulator.tail()]
        return "\n".join([views, *processes, *agents])

    def all_updated(self) -> bool:
        return all(view.phase(TARGET) == "updated" for view in self.observer.views().values())

    def wait_until_updated(self, seconds: float) -> None:
        def updated() -> bool:
            for process in (self.apiserver, self.controller):
                exited = process.process.poll()
                assert exited is None, f"{process.command} exited {exited}"
            return self.all_updated()

        try:
            wait_until(updated, "every node updated", seconds=seconds, interval=0.1)
        except AssertionError as late:
            raise AssertionError(f"{late}\n{self.explain()}") from None


def refuse_first_eviction(emulator: KubeEmulator, pod: str) -> None:
    """The first eviction of `pod` is answered 429, as a budget's refusal (store untouched)."""
    path = f"/api/v1/namespaces/{WORKLOADS}/pods/{pod}/eviction"
    body = status_body(429, "TooManyRequests", "Cannot evict pod (refused once by the test)")
    emulator[f"post {path}"][:1] << 429 << body


def conflict_on_first_spec_write(emulator: KubeEmulator, node: str, made: set[str]) -> None:
    """Just before the controller's first spec write of the node's shadow lands, someone else
    changes the shadow (an annotation, as `kubectl annotate` would), so that write carries a
    stale resourceVersion and the emulator answers 409 Conflict."""
    name = f"brs-{node}"

    def write_meanwhile(_: object) -> None:
        current = emulator.stored(SHADOWS, NAMESPACE, name)
        if current is not None:
            current["metadata"].setdefault("annotations", {})["e2e.test/touched"] = "true"
            emulator.put_object(SHADOWS, current)
            made.add(name)

    emulator[f"patch {SHADOWS_PATH}/{name}"][:1] >> write_meanwhile


def start_apiserver(
    stack: ExitStack, kubeconfig: Path, work_dir: Path
) -> tuple[BrupopProcess, str, TlsFiles]:
    """`brupop apiserver` on a free loopback port, answering /ping; its URL and TLS files."""
    tls = write_loopback_tls(work_dir / "tls")
    port = free_port()
    settings = {
        "APISERVER_INTERNAL_PORT": str(port),
        "APISERVER_BIND_ADDRESS": "127.0.0.1",
        # The emulator answers TokenReviews and serves no issuer keys: this rollout proves the
        # TokenReview setting; local verification is proven on the real control plane
        # (tests/realcluster/test_token_verification.py).
        "APISERVER_TOKEN_VERIFICATION": "tokenreview",
        "APISERVER_TLS_CERT_PATH": str(tls.cert),
        "APISERVER_TLS_KEY_PATH": str(tls.key),
        "TERMINATION_LOG": str(work_dir / "apiserver-termination-log"),
        **OPTIONS.timing.env_for(Component.APISERVER),
        **PATIENT_APISERVER,
    }
    apiserver = BrupopProcess.start(
        "apiserver", cluster_env(kubeconfig, settings), work_dir / "logs" / "apiserver.log"
    )
    stack.callback(apiserver.stop)
    url = f"https://127.0.0.1:{port}"
    wait_for_ping(url, tls.ca_cert, apiserver, START_SECONDS)
    return apiserver, url, tls


def start_controller(stack: ExitStack, kubeconfig: Path, work_dir: Path) -> BrupopProcess:
    """`brupop controller` with the test's limit, an always-open window and fast timings."""
    settings = {
        "MY_NODE_NAME": CONTROLLER_NODE,
        "MAX_CONCURRENT_UPDATE": str(OPTIONS.max_concurrent),
        "SCHEDULER_CRON_EXPRESSION": "* * * * * * *",
        "CONTROLLER_METRICS_PORT": "0",
        "CONTROLLER_BIND_ADDRESS": "127.0.0.1",
        **OPTIONS.timing.env_for(Component.CONTROLLER),
        **PATIENT_CONTROLLER,
    }
    controller = BrupopProcess.start(
        "controller", cluster_env(kubeconfig, settings), work_dir / "logs" / "controller.log"
    )
    stack.callback(controller.stop)
    return controller


def start_agents(
    stack: ExitStack, fleet: list[SimulatedNode], url: str, tls: TlsFiles, work_dir: Path
) -> AgentSupervisor:
    """One `brupop agent` per node against its emulated host, restarted when it exits."""
    apiclient = default_apiclient(work_dir)
    specs = [
        AgentSpec(
            node=node.name,
            argv=agent_argv(),
            env=agent_env(
                node, OPTIONS, apiserver_url=url, tls=tls, apiclient=apiclient,
                namespace=NAMESPACE,
            ) | PATIENT_AGENT,
            log_path=work_dir / "logs" / f"{node.name}.log",
        )
        for node in fleet
    ]  # fmt: skip
    supervisor = AgentSupervisor(
        specs,
        restart_backoff=OPTIONS.timing["restart-backoff"],
        restart_backoff_max=OPTIONS.timing["restart-backoff-max"],
    )
    supervisor.start()
    stack.callback(supervisor.stop)
    return supervisor


class PatientShadowWatch(KubernetesShadowRepository):
    """The shadows, each watch held for seconds: the observer's half-second watches, reopened
    without end, cost an emulator under load more than it could answer."""

    def watch(
        self, resource_version: str | None, timeout_seconds: float
    ) -> Iterator[WatchEvent[Shadow] | WatchBookmark]:
        return super().watch(resource_version, max(timeout_seconds, OBSERVER_WATCH_SECONDS))


def prepare_cluster(emulator: KubeEmulator, work_dir: Path) -> Callable[[], dict[str, Any]]:
    """Run in the emulator's process: the fleet, a refused eviction, a conflict per shadow."""
    add_fleet(emulator, NAMES, work_dir)
    made: set[str] = set()
    for node in NAMES:
        conflict_on_first_spec_write(emulator, node, made)
    refuse_first_eviction(emulator, web_pod(0))
    return lambda: {"conflicts_made": sorted(made)}


@pytest.fixture
def rollout(tmp_path: Path) -> Iterator[Rollout]:
    with ExitStack() as stack:
        (tmp_path / "logs").mkdir()
        setup = f"{__name__}:{prepare_cluster.__name__}"
        emulator = stack.enter_context(EmulatorProcess(setup, tmp_path))
        fleet = fleet_files(NAMES, tmp_path)
        kubeconfig = write_kubeconfig(tmp_path / "kubeconfig", emulator.url)

        apiserver, url, tls = start_apiserver(stack, kubeconfig, tmp_path)
        controller = start_controller(stack, kubeconfig, tmp_path)
        api_client = emulator.api_client()
        stack.callback(api_client.close)
        observer = FleetObserver(PatientShadowWatch(ApiCalls(api_client), NAMESPACE), NAMES)
        observer.start()
        stack.callback(observer.stop)
        supervisor = start_agents(stack, fleet, url, tls, tmp_path)
        yield Rollout(
            emulator, observer, supervisor, apiserver, controller, fleet, tmp_path / "logs"
        )


@pytest.mark.e2e
def test_three_nodes_roll_through_the_kubernetes_api_within_the_limit(rollout: Rollout) -> None:
    rollout.wait_until_updated(ROLLOUT_SECONDS)

    def renewed_lease() -> dict[str, Any] | None:
        """The Lease once the leader has renewed it (a quick rollout may end before that)."""
        lease = rollout.emulator.snapshot().stored(LEASES, NAMESPACE, DEFAULT_LEASE_NAME)
        spec = lease["spec"] if lease is not None else {}
        return lease if spec.get("renewTime", "") > spec.get("acquireTime", "~") else None

    wait_until(renewed_lease, "the leader renewed its Lease", seconds=60, interval=0.2)
    while_leading = renewed_lease()
    rollout.supervisor.stop(grace_seconds=5.0)
    exits = {"controller": rollout.controller.stop(), "apiserver": rollout.apiserver.stop()}
    cluster = rollout.emulator.snapshot()

    assert 1 <= rollout.observer.max_active <= 2, rollout.explain()
    assert exits == {"controller": 0, "apiserver": 0}, rollout.explain()
    for node in rollout.fleet:
        host = read_host_facts(node.host_dir)
        assert host is not None and (host.version, host.reboots) == (TARGET, 1), node.name
        agent = rollout.supervisor.views()[node.name]
        assert [e.code for e in agent.exits if not e.acceptable] == [], (node.name, agent.exits)
    for shadow in cluster.objects_of(SHADOWS):
        assert shadow["spec"]["state"] == "Idle", shadow
        assert shadow["status"]["current_state"] == "Idle", shadow
        assert shadow["status"]["current_version"] == TARGET, shadow
    assert len(cluster.objects_of(SHADOWS)) == len(NAMES)
    for stored in cluster.objects_of(NODES):
        assert not stored["spec"].get("unschedulable"), stored
        assert LB_EXCLUSION_LABEL not in stored["metadata"]["labels"], stored

    # What crossed the wire on the way.
    workloads = [
        pod for pod in cluster.objects_of(PODS) if pod["metadata"]["namespace"] == WORKLOADS
    ]
    assert workloads == [], "every web pod was evicted"
    first = f"/api/v1/namespaces/{WORKLOADS}/pods/{web_pod(0)}/eviction"
    assert len(cluster.requests_to("POST", first)) == 2  # refused once, then evicted
    assert cluster.facts["conflicts_made"] == sorted(f"brs-{name}" for name in NAMES)
    for name in NAMES:  # the controller read the refused write's shadow again, then resent it
        refused, retried = cluster.requests_to("PATCH", f"{SHADOWS_PATH}/brs-{name}")[:2]
        assert [_spec_of(refused), _spec_of(retried)] == [("StagedAndPerformedUpdate", TARGET)] * 2
        assert refused.data["metadata"] != retried.data["metadata"]
    assert len(cluster.requests_to("POST", TOKEN_REVIEWS)) >= len(NAMES)
    assert while_leading is not None
    leading = while_leading["spec"]
    assert leading["holderIdentity"] and leading["renewTime"] > leading["acquireTime"], leading
    released = cluster.stored(LEASES, NAMESPACE, DEFAULT_LEASE_NAME)
    assert released is not None and released["spec"].get("holderIdentity") is None, released
    watches = [
        request
        for request in cluster.requests
        if request.path == SHADOWS_PATH and request.params.get("watch", "").lower() in ("true", "1")
    ]
    assert len(watches) >= 3  # the apiserver's feed, the controller, this test's observer


def _spec_of(request: Recorded) -> tuple[str, str]:
    return request.data["spec"]["state"], request.data["spec"]["version"]
