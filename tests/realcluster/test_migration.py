"""Migration from the original (Rust) brupop, rehearsed on the real control plane.

The original's install is set up mid-rollout: its CRD (v2 stored, v1 served), five kwok Nodes
with its opt-in label, its agent pods, and shadows as its agents and controller wrote them: two
nodes done, one rebooted into the new version and still cordoned (and out of the load
balancers), one just told to stage, one waiting with an old failure. docs/migrate.md's steps
are then run as written (its `rehearsed` blocks); `helm upgrade` is played by rendering the
chart with the original's values and starting brupop for Python's apiserver, controller (with
the rendered environment) and one real agent per node, replaced node by node.
"""

from __future__ import annotations

import functools
import time
from collections.abc import Iterator
from dataclasses import dataclass
from pathlib import Path
from typing import Any

import pytest
from kubernetes import client
from kubernetes.client.exceptions import ApiException

from brupop.adapters.kubernetes.cluster import KubernetesCluster
from brupop.hostsim.control import read_host
from brupop.ports.cluster.shadow_repository import ShadowRepository
from brupop.simulation.fleet.certificates import write_loopback_tls
from brupop.simulation.fleet.observer import FleetObserver, NodeView, NodeViewChange
from brupop.simulation.fleet.real_cluster.connection import ClusterAccess, connect
from tests.realcluster.conftest import ControlPlane
from tests.realcluster.controllers import running
from tests.support.migrate_doc import migrated_values, run_step
from tests.support.original_cluster import (
    OriginalCluster,
    install_original,
    remove_brupop_crds,
    remove_original,
)
from tests.support.original_install import (
    CRD_NAME,
    GROUP,
    LB_EXCLUSION,
    NAMESPACE,
    ORIGINAL_VALUES,
    OriginalNode,
    fields_the_original_knows,
    original_shadow_crd,
    stored_fields,
)
from tests.support.polling import wait_until
from tests.support.python_install import (
    AgentRollout,
    container_env,
    controller_from_env,
    install_over_original,
    rendered_chart,
    start_apiserver,
)

pytestmark = [pytest.mark.timeout(300), pytest.mark.e2e]
NEW = "1.20.0"
LIMIT = int(ORIGINAL_VALUES["max_concurrent_updates"])
ROLLOUT = (
    OriginalNode("mig-a", NEW),
    OriginalNode("mig-b", NEW),
    OriginalNode(
        "mig-c",
        NEW,
        spec_state="MonitoringUpdate",
        spec_version=NEW,
        spec_age_seconds=20,
        status_state="RebootedIntoUpdate",
        cordoned=True,
        lb_excluded=True,
    ),
    OriginalNode(
        "mig-d",
        "1.19.0",
        spec_state="StagedAndPerformedUpdate",
        spec_version=NEW,
        spec_age_seconds=5,
    ),
    OriginalNode("mig-e", "1.19.0", crash_count=1, failed_seconds_ago=3600),
)
MARKS = (
    "brupop.bottlerocket.aws/cordoned-by-brupop",
    "brupop.bottlerocket.aws/lb-excluded-by-brupop",
)
SHADOWS = "bottlerocketshadows"
JSON = dict[str, Any]


@dataclass(frozen=True)
class Migration:
    """What the rehearsal saw: the original's snapshot, the rollout's history and the end."""

    original: OriginalCluster
    seconds: float
    views: dict[str, NodeView]
    history: list[NodeViewChange]
    max_active: int
    hosts: dict[str, JSON]
    shadows: dict[str, JSON]
    nodes: dict[str, client.V1Node]
    listed: str  # `kubectl get brs` at the end, as the page has the user run it
    controller_env: dict[str, str]  # the rendered chart's, from the original's value names
    agent_env: dict[str, str]
    access: ClusterAccess
    kubeconfig: Path
    work_dir: Path


@pytest.fixture(scope="module")
def migration(
    control_plane: ControlPlane, tmp_path_factory: pytest.TempPathFactory
) -> Iterator[Migration]:
    """The whole migration, run once; brupop for Python's processes are stopped before the
    tests look (a rollback replaces them), the objects are removed after the last test."""
    work_dir = tmp_path_factory.mktemp("migration")
    access = connect(control_plane.kubeconfig)
    remove_original(access, ROLLOUT)  # what another test's install left on the session's
    remove_brupop_crds(access.admin)  # control plane under the same names
    try:
        yield migrate(access, control_plane.kubeconfig, work_dir)
    finally:
        remove_original(access, ROLLOUT)
        remove_brupop_crds(access.admin)
        access.close()


def migrate(access: ClusterAccess, kubeconfig: Path, work_dir: Path) -> Migration:
    original = install_original(access, ROLLOUT)
    admin = client.CustomObjectsApi(access.admin)
    observer = FleetObserver(_admin_shadows(access), [n.name for n in ROLLOUT])
    observer.start()
    try:
        for step in ("stop-controller", "forget-crd-release", "hand-over-crd", "mark-in-flight"):
            run_step(step, kubeconfig, work_dir)
        documents = rendered_chart(migrated_values(ORIGINAL_VALUES))
        tls = write_loopback_tls(work_dir / "tls")
        port = install_over_original(access.admin, tls)
        started = time.monotonic()
        apiserver = start_apiserver(access, tls, port)
        env = container_env(documents, "Deployment", "brupop-controller-deployment")
        agent_env = container_env(documents, "DaemonSet", "brupop-agent")
        agents = AgentRollout(original.fleet, access.core, work_dir, apiserver.url, tls, agent_env)
        try:
            with running(controller_from_env(access, env)):
                for node in ROLLOUT:  # the DaemonSet's rolling update: one node at a time
                    supervisor = agents.replace(node, original.agent_pods[node.name])
                    wait_until(
                        functools.partial(supervisor.running_nodes, ready=True),
                        f"{node.name}'s new agent up",
                        seconds=30,
                    )
                wait_until(lambda: _all_done(admin), "the rollout done", seconds=150)
        finally:
            agents.stop()
            apiserver.stop()
        seconds = time.monotonic() - started
    finally:
        observer.stop()
    return Migration(
        original=original,
        seconds=seconds,
        views=observer.views(),
        history=observer.history(),
        max_active=observer.max_active,
        hosts={n.name: read_host(str(work_dir / "nodes" / n.name / "host")) for n in ROLLOUT},
        shadows=_shadows(admin),
        nodes={n.name: access.core.read_node(n.name) for n in ROLLOUT},
        listed=run_step("list-shadows", kubeconfig, work_dir),
        controller_env=env,
        agent_env=agent_env,
        access=access,
        kubeconfig=kubeconfig,
        work_dir=work_dir,
    )


def test_the_shadows_the_original_wrote_are_kept_and_every_node_ends_idle_on_the_new_version(
    migration: Migration,
) -> None:
    print(f"migration rehearsal: {migration.seconds:.1f} s from install to every node Idle")
    kept = {name: shadow["metadata"]["uid"] for name, shadow in migration.shadows.items()}
    assert kept == migration.original.shadow_uids, "a shadow was recreated or lost"
    for node in ROLLOUT:
        shadow = migration.shadows[node.name]
        owner = shadow["metadata"]["ownerReferences"][0]
        assert (owner["kind"], owner["name"]) == ("Node", node.name), shadow["metadata"]
        assert shadow["spec"]["state"] == "Idle", shadow
        status = shadow["status"]
        assert (status["current_state"], status["current_version"]) == ("Idle", NEW), status
        assert f"brs-{node.name}" in migration.listed and "Idle" in migration.listed


def test_the_original_values_reach_brupop_for_pythons_processes_under_the_same_names(
    migration: Migration,
) -> None:
    controller, agent = migration.controller_env, migration.agent_env
    assert controller["MAX_CONCURRENT_UPDATE"] == ORIGINAL_VALUES["max_concurrent_updates"]
    assert controller["SCHEDULER_CRON_EXPRESSION"] == "* * * * * * *"
    assert controller["TRACING_FILTER_DIRECTIVE"] == "debug"
    assert "UPDATE_WINDOW_START" not in controller, "the page drops the window values"
    assert agent["EXCLUDE_FROM_LB_WAIT_TIME_IN_SEC"] == "1"


def test_the_rollout_under_way_continues_with_no_node_updated_twice_and_the_limit_kept(
    migration: Migration,
) -> None:
    reboots = {name: host["reboots"] for name, host in migration.hosts.items()}
    assert reboots == {"mig-a": 0, "mig-b": 0, "mig-c": 0, "mig-d": 1, "mig-e": 1}, reboots
    starts = {name: view.times_started for name, view in migration.views.items()}
    # mig-c and mig-d were in flight when first seen; mig-e is the only start brupop made.
    assert starts == {"mig-a": 0, "mig-b": 0, "mig-c": 1, "mig-d": 1, "mig-e": 1}, starts
    assert migration.max_active <= LIMIT, f"{migration.max_active} in flight, limit {LIMIT}"


def test_the_node_the_original_left_cordoned_is_back_in_service_and_no_mark_stays(
    migration: Migration,
) -> None:
    for name, node in migration.nodes.items():
        assert not node.spec.unschedulable, f"{name} left cordoned"
        assert LB_EXCLUSION[0] not in (node.metadata.labels or {}), f"{name} left out of LBs"
        annotations = node.metadata.annotations or {}
        assert not [m for m in MARKS if m in annotations], (name, annotations)


def test_the_waiting_node_keeps_the_failure_the_original_counted_until_it_starts(
    migration: Migration,
) -> None:
    before_start = [
        c.after for c in migration.history if c.after.node == "mig-e" and not c.after.times_started
    ]
    assert before_start, "mig-e was never seen before its start"
    assert {(v.crash_count, v.failing_since is not None) for v in before_start} == {(1, True)}
    assert migration.views["mig-e"].crash_count == 0, "a successful update clears the count"


def test_a_chart_upgrade_rewrites_every_shadow_in_the_version_stored(
    migration: Migration,
) -> None:
    admin = client.CustomObjectsApi(migration.access.admin)
    before = {name: stored_fields(s) for name, s in _shadows(admin).items()}

    stored = run_step("stored-versions", migration.kubeconfig, migration.work_dir)
    run_step("rewrite-shadows", migration.kubeconfig, migration.work_dir)

    assert stored.strip() == '["v2"]', stored
    after = _shadows(admin)
    assert {name: stored_fields(s) for name, s in after.items()} == before


def test_rolling_back_serves_the_shadows_we_stored_under_the_original_schema(
    migration: Migration,
) -> None:
    admin = client.CustomObjectsApi(migration.access.admin)
    extensions = client.ApiextensionsV1Api(migration.access.admin)
    ours = {name: fields_the_original_knows(s) for name, s in _shadows(admin).items()}

    run_step("keep-crd", migration.kubeconfig, migration.work_dir)
    run_step("return-crd", migration.kubeconfig, migration.work_dir)
    current = extensions.read_custom_resource_definition(CRD_NAME)
    theirs = original_shadow_crd()  # what `helm install brupop-crd` puts back
    theirs["metadata"]["resourceVersion"] = current.metadata.resource_version
    extensions.replace_custom_resource_definition(CRD_NAME, theirs)
    run_step("forget-brupop", migration.kubeconfig, migration.work_dir)

    wait_until(lambda: _serves_original(extensions, admin), "the original's CRD served", seconds=30)
    served = _shadows(admin)
    assert {name: stored_fields(s) for name, s in served.items()} == ours
    for shadow in served.values():  # a write validates the object against the original's schema
        name = shadow["metadata"]["name"]
        admin.replace_namespaced_custom_object(GROUP, "v2", NAMESPACE, SHADOWS, name, shadow)
        fresh = admin.get_namespaced_custom_object(GROUP, "v2", NAMESPACE, SHADOWS, name)
        admin.replace_namespaced_custom_object_status(GROUP, "v2", NAMESPACE, SHADOWS, name, fresh)
    for node in migration.access.core.list_node().items:
        assert not set(MARKS) & set(node.metadata.annotations or {}), node.metadata.name


def _admin_shadows(access: ClusterAccess) -> ShadowRepository:
    return KubernetesCluster(access.admin, NAMESPACE).shadows


def _shadows(objects: client.CustomObjectsApi) -> dict[str, JSON]:
    listing = objects.list_namespaced_custom_object(GROUP, "v2", NAMESPACE, SHADOWS)
    return {s["metadata"]["name"].removeprefix("brs-"): s for s in listing["items"]}


def _all_done(objects: client.CustomObjectsApi) -> bool:
    shadows = _shadows(objects).values()
    settled = all(
        s["spec"]["state"] == "Idle"
        and (s.get("status") or {}).get("current_state") == "Idle"
        and (s.get("status") or {}).get("current_version") == NEW
        for s in shadows
    )
    return settled and len(shadows) == len(ROLLOUT)


def _serves_original(
    extensions: client.ApiextensionsV1Api, objects: client.CustomObjectsApi
) -> bool:
    """The original's CRD is in place and its shadows are served (kube-apiserver answers 429
    while it re-initialises the resource's storage after the CRD changed)."""
    webhook = extensions.read_custom_resource_definition(CRD_NAME).spec.conversion.webhook
    service = webhook.client_config.service if webhook else None
    if service is None or service.port != 443:
        return False
    try:
        objects.list_namespaced_custom_object(GROUP, "v2", NAMESPACE, SHADOWS)
    except ApiException as error:
        if error.status == 429:
            return False
        raise
    return True
