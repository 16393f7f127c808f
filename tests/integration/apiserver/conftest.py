"""A real apiserver on loopback HTTPS over an in-memory cluster, and agents' clients for it."""

from __future__ import annotations

import os
import subprocess
import sys
from collections.abc import Callable, Iterator
from dataclasses import dataclass, field
from pathlib import Path

import pytest

from brupop.adapters.apiserver_client import ApiserverClient, RetrySchedule
from brupop.adapters.apiserver_http.app import ApiserverOptions
from brupop.adapters.apiserver_http.conversion.by_size import ConversionBySize
from brupop.adapters.apiserver_http.routes.metrics import ApiserverMetrics
from brupop.adapters.apiserver_http.serving.server import (
    RunningServer,
    ServerLimits,
    serve_in_thread,
)
from brupop.adapters.memory.cluster import InMemoryCluster
from brupop.domain.cluster.objects import COMPONENT_LABEL, OwnerReference
from brupop.entrypoints.apiserver.container import apiserver_container
from brupop.services.apiserver.authorization.authorizer import AGENT_SERVICE_ACCOUNT
from brupop.services.apiserver.drain.drainer import DrainTimings
from brupop.services.apiserver.drain.registry import DrainRegistry
from brupop.services.apiserver.shadow_feed import ShadowFeed
from tests.support.ports import free_port
from tests.support.tls import TestCertificates, make_certificates

NS = "brupop-bottlerocket-aws"
NODES = ("n1", "n2")
AGENT_OWNER = OwnerReference(kind="DaemonSet", name="brupop-agent", controller=True)
FAST_DRAINS = DrainTimings(
    timeout_seconds=1.0, retry_interval_seconds=0.05, deletion_timeout_seconds=1.0
)


def agent_pod(node: str) -> str:
    return f"brupop-agent-{node}"


def add_agent_nodes(cluster: InMemoryCluster, nodes: tuple[str, ...] = NODES) -> None:
    """Nodes `uid-<name>`, each with its DaemonSet-owned agent pod."""
    for node in nodes:
        cluster.add_node(node, uid=f"uid-{node}")
        cluster.add_pod(
            NS,
            agent_pod(node),
            node,
            labels={COMPONENT_LABEL: "agent"},
            owners=(AGENT_OWNER,),
            service_account=AGENT_SERVICE_ACCOUNT,
        )


@dataclass
class Rig:
    """The server, its cluster, the services a test watches (from the app's container), and a
    way to make each node's agent client."""

    cluster: InMemoryCluster
    server: RunningServer
    feed: ShadowFeed
    drains: DrainRegistry
    metrics: ApiserverMetrics
    conversion: ConversionBySize
    certs: TestCertificates
    tokens: dict[str, Path]
    clients: list[ApiserverClient] = field(default_factory=list)
    begin_shutdown: Callable[[], None] | None = None

    def stop(self) -> None:
        for client in self.clients:
            client.close()
        self.server.stop()

    def client(self, node: str, *, retries: int = 0) -> ApiserverClient:
        """The agent client of `node` (its token file is written on first use)."""
        if node not in self.tokens:
            path = self.certs.ca_path.parent / f"token-{node}"
            path.write_text(self.cluster.issue_token(NS, agent_pod(node)))
            self.tokens[node] = path
        client = ApiserverClient(
            base_url=self.server.base_url,
            node_name=node,
            token_path=self.tokens[node],
            ca_path=self.certs.ca_path,
            timeout_seconds=5.0,
            drain_timeout_seconds=5.0,
            retry=RetrySchedule(retries=retries, base_seconds=0.01, cap_seconds=0.05),
        )
        self.clients.append(client)
        return client


@pytest.fixture(scope="session")
def certs(tmp_path_factory: pytest.TempPathFactory) -> TestCertificates:
    return make_certificates(tmp_path_factory.mktemp("tls"))


def start_rig(
    certs: TestCertificates,
    cluster: InMemoryCluster,
    options: ApiserverOptions,
    limits: ServerLimits | None = None,
) -> Rig:
    container = apiserver_container(cluster=cluster, options=options)
    app = container.app()
    server = serve_in_thread(
        app,
        certfile=certs.cert_path,
        keyfile=certs.key_path,
        cert_check_seconds=0.0,
        limits=limits,
        webhook_port=options.webhook_port,
    )
    return Rig(
        cluster,
        server,
        feed=container.feed(),
        drains=container.drains(),
        metrics=container.metrics(),
        conversion=container.conversion(),
        certs=certs,
        tokens={},
        begin_shutdown=app.state.begin_shutdown,
    )


RigFactory = Callable[..., Rig]


def open_connections(rig: Rig, listener: str) -> int:
    """The connections `listener` ("agents" or "webhook") holds a slot for."""
    server = rig.server.server
    return sum(a.slots.open for a in server.admissions if a.name == listener)  # type: ignore[attr-defined]


@pytest.fixture
def make_rig(certs: TestCertificates, tmp_path: Path) -> Iterator[RigFactory]:
    """Start rigs with chosen options; all are stopped after the test."""
    started: list[Rig] = []

    def make(limits: ServerLimits | None = None, **options: object) -> Rig:
        cluster = InMemoryCluster(NS)
        add_agent_nodes(cluster)
        settings = {"namespace": NS, "drain": FAST_DRAINS, "feed_watch_seconds": 0.5}
        settings.update(options)
        local = make_certificates(tmp_path / f"tls-{len(started)}")
        rig = start_rig(local, cluster, ApiserverOptions(**settings), limits)  # type: ignore[arg-type]
        started.append(rig)
        return rig

    yield make
    for rig in started:
        rig.stop()


@pytest.fixture
def rig(make_rig: RigFactory) -> Rig:
    return make_rig()


def start_brupop_apiserver(
    certs: TestCertificates, extra_env: dict[str, str] | None = None, **env_changes: str | None
) -> tuple[subprocess.Popen[bytes], int]:
    """`brupop apiserver` as its own process on a free loopback port, over the memory cluster,
    logging JSON lines to its stderr (a pipe); returns the process and its port.

    `extra_env` and `env_changes` set variables; a variable given None is removed."""
    port = free_port()
    env = {
        **os.environ,
        "BRUPOP_CLUSTER": "memory",
        "APISERVER_INTERNAL_PORT": str(port),
        "APISERVER_BIND_ADDRESS": "127.0.0.1",
        "APISERVER_TLS_CERT_PATH": str(certs.cert_path),
        "APISERVER_TLS_KEY_PATH": str(certs.key_path),
        "LOGGING_FORMATTER": "json",
        **(extra_env or {}),
    }
    for name, value in env_changes.items():
        if value is None:
            env.pop(name, None)
        else:
            env[name] = value
    process = subprocess.Popen(
        [sys.executable, "-m", "brupop", "apiserver"],
        env=env,
        stdout=subprocess.DEVNULL,
        stderr=subprocess.PIPE,
    )
    return process, port
