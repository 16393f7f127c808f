"""A whole rollout through the Kubernetes adapters: `brupop apiserver` and `brupop controller`
processes reach the cluster only through a kubeconfig, over HTTP to the Kubernetes API
emulator, and one `brupop agent` process per node drives its emulated host.

Watches, the controller's Lease, TokenReviews, evictions (one refused by a 429 first) and a
real conflict on every shadow's first spec write cross the wire; a watch of the shadows (also
over the wire) checks that the concurrency limit holds at every step.
"""

from __future__ import annotations

import time
from collections.abc import Iterator
from contextlib import ExitStack
from dataclasses import dataclass, field
from pathlib import Path
from typing import Any

import pytest

from brupop.adapters.kubernetes.cluster import KubernetesCluster
from brupop.cli.fleet_description.nodes import SimulatedNode
from brupop.domain.cluster.objects import LB_EXCLUSION_LABEL
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
    free_port,
    wait_for_ping,
    web_pod,
    write_kubeconfig,
)
from tests.support.kube_api_rules import KINDS, NODES, PODS, SHADOWS, status_body
from tests.support.kube_emulator import KubeEmulator
from tests.support.kube_emulator_server import EmulatorServer

OPTIONS = SimulationOptions(nodes=3, max_concurrent=2)
NAMES = OPTIONS.node_names()
TARGET = OPTIONS.to_version
LEASES = KINDS["coordination.k8s.io", "v1", "leases"]
SHADOWS_PATH = f"/apis/brupop.bottlerocket.aws/v2/namespaces/{NAMESPACE}/bottlerocketshadows"
TOKEN_REVIEWS = "/apis/authentication.k8s.io/v1/tokenreviews"
CONTROLLER_NODE = "control-plane-1"
ROLLOUT_SECONDS = 240.0  # far above a healthy run (about 20 s); a slow machine is not a failure
START_SECONDS = 60.0
# The test's own deadlines fail first, with what each process said; pytest's only after them.
pytestmark = pytest.mark.timeout(ROLLOUT_SECONDS + 4 * START_SECONDS + 60)


@dataclass
class Rollout:
    """What one run started: to watch it, stop it, and explain a failure."""

    emulator: KubeEmulator
    observer: FleetObserver
    supervisor: AgentSupervisor
    apiserver: BrupopProcess
    controller: BrupopProcess
    fleet: list[SimulatedNode]
    log_dir: Path
    conflicts_made: set[str] = field(default_factory=set)

    def explain(self) -> str:
        views = "\n".join(str(view) for view in self.observer.views().values())
        agents = [
            f"--- {name}\n" + "\n".join(path.read_text(errors="replace").splitlines()[-20:])
            for name in NAMES
            if (path := self.log_dir / f"{name}.log").exists()
        ]
        return "\n".join([views, self.apiserver.tail(), self.controller.tail(), *agents])

    def all_updated(self) -> bool:
        return all(view.phase(TARGET) == "updated" for view in self.observer.views().values())

    def wait_until_updated(self, seconds: float) -> None:
        deadline = time.monotonic() + seconds
        while not self.all_updated():
            for process in (self.apiserver, self.controller):
                exited = process.process.poll()
                assert exited is None, f"{process.command} exited {exited}\n{self.explain()}"
            assert time.monotonic() < deadline, f"not every node updated\n{self.explain()}"
            time.sleep(0.1)


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
            ),
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


@pytest.fixture
def rollout(tmp_path: Path) -> Iterator[Rollout]:
    with ExitStack() as stack:
        server = stack.enter_context(EmulatorServer())
        emulator = server.emulator
        (tmp_path / "logs").mkdir()
        fleet = add_fleet(emulator, NAMES, tmp_path)
        made: set[str] = set()
        for node in NAMES:
            conflict_on_first_spec_write(emulator, node, made)
        refuse_first_eviction(emulator, web_pod(0))
        kubeconfig = write_kubeconfig(tmp_path / "kubeconfig", server.url)

        apiserver, url, tls = start_apiserver(stack, kubeconfig, tmp_path)
        controller = start_controller(stack, kubeconfig, tmp_path)
        watcher = KubernetesCluster(server.api_client(), NAMESPACE)
        stack.callback(watcher.close)
        observer = FleetObserver(watcher.shadows, NAMES)
        observer.start()
        stack.callback(observer.stop)
        supervisor = start_agents(stack, fleet, url, tls, tmp_path)
        yield Rollout(
            emulator, observer, supervisor, apiserver, controller, fleet, tmp_path / "logs", made
        )


def requests_to(emulator: KubeEmulator, method: str, path: str) -> list[Any]:
    return [
        request
        for request in emulator.requests
        if str(request.method.value).upper() == method and request.url.path == path
    ]


@pytest.mark.e2e
def test_three_nodes_roll_through_the_kubernetes_api_within_the_limit(rollout: Rollout) -> None:
    emulator = rollout.emulator

    rollout.wait_until_updated(ROLLOUT_SECONDS)
    lease_while_leading = emulator.stored(LEASES, NAMESPACE, DEFAULT_LEASE_NAME)
    rollout.supervisor.stop(grace_seconds=5.0)
    exits = {"controller": rollout.controller.stop(), "apiserver": rollout.apiserver.stop()}

    assert 1 <= rollout.observer.max_active <= 2, rollout.explain()
    assert exits == {"controller": 0, "apiserver": 0}, rollout.explain()
    for node in rollout.fleet:
        host = read_host_facts(node.host_dir)
        assert host is not None and (host.version, host.reboots) == (TARGET, 1), node.name
        agent = rollout.supervisor.views()[node.name]
        assert [e.code for e in agent.exits if not e.acceptable] == [], (node.name, agent.exits)
    for shadow in emulator.objects_of(SHADOWS):
        assert shadow["spec"]["state"] == "Idle", shadow
        assert shadow["status"]["current_state"] == "Idle", shadow
        assert shadow["status"]["current_version"] == TARGET, shadow
    assert len(emulator.objects_of(SHADOWS)) == len(NAMES)
    for stored in emulator.objects_of(NODES):
        assert not stored["spec"].get("unschedulable"), stored
        assert LB_EXCLUSION_LABEL not in stored["metadata"]["labels"], stored

    # What crossed the wire on the way.
    workloads = [
        pod for pod in emulator.objects_of(PODS) if pod["metadata"]["namespace"] == WORKLOADS
    ]
    assert workloads == [], "every web pod was evicted"
    first = f"/api/v1/namespaces/{WORKLOADS}/pods/{web_pod(0)}/eviction"
    assert len(requests_to(emulator, "POST", first)) == 2  # refused once, then evicted
    assert rollout.conflicts_made == {f"brs-{name}" for name in NAMES}
    for name in NAMES:  # the controller read the refused write's shadow again, then resent it
        refused, retried = requests_to(emulator, "PATCH", f"{SHADOWS_PATH}/brs-{name}")[:2]
        wanted = [(r.data["spec"]["state"], r.data["spec"]["version"]) for r in (refused, retried)]
        assert wanted == [("StagedAndPerformedUpdate", TARGET)] * 2
        assert refused.data["metadata"] != retried.data["metadata"]
    assert len(requests_to(emulator, "POST", TOKEN_REVIEWS)) >= len(NAMES)
    assert lease_while_leading is not None
    leading = lease_while_leading["spec"]
    assert leading["holderIdentity"] and leading["renewTime"] > leading["acquireTime"], leading
    released = emulator.stored(LEASES, NAMESPACE, DEFAULT_LEASE_NAME)
    assert released is not None and released["spec"].get("holderIdentity") is None, released
    watches = [
        request
        for request in emulator.requests
        if request.url.path == SHADOWS_PATH
        and str(request.params.get("watch")).lower() in ("true", "1")
    ]
    assert len(watches) >= 3  # the apiserver's feed, the controller, this test's observer
