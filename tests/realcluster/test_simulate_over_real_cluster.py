"""`brupop simulate --kubeconfig`: the rehearsal over a real kube-apiserver (with kwok), on a
control plane of this module's own (the session one may hold other tests' Nodes, which
simulate rightly refuses).

The e2e scenarios imported below run here unchanged, with the `simulate` fixture of this
module adding `--kubeconfig`: the same assertions hold on both backends.
"""

from __future__ import annotations

import json
import subprocess
from collections.abc import Iterator
from pathlib import Path

import pytest
from kubernetes import client, config

from tests.e2e.simulate_run import Simulate, explain
from tests.e2e.test_blocked_drain import (
    test_an_undrainable_node_is_uncordoned_and_backs_off_while_the_rest_update as test_blocked_drain,  # noqa: E501
)
from tests.e2e.test_canary_soak import (
    test_the_canaries_update_first_and_the_others_wait_out_their_soak as test_canary_soak,
)
from tests.e2e.test_chaos import (
    test_the_fleet_converges_while_agents_are_killed_at_random as test_chaos_kills,
)
from tests.e2e.test_controller_restart import (
    test_a_controller_restart_mid_rollout_keeps_the_limit_and_finishes as test_controller_restart,
)
from tests.e2e.test_fleet_scheduling import (
    test_a_zone_budget_of_one_keeps_one_node_per_zone_outside_idle_and_all_finish as test_zones,
)
from tests.e2e.test_health_gate_halt import (
    test_an_unhealthy_node_fails_its_gate_and_the_fleet_halts_with_nothing_cordoned as test_health_gate_halt,  # noqa: E501
)
from tests.e2e.test_notify import (
    test_simulate_notify_sends_the_runs_notifications_to_a_webhook as test_notifications,
)
from tests.e2e.test_pause_resume import (
    test_no_node_starts_while_paused_and_the_rollout_completes_after_the_resume as test_pause_and_resume,  # noqa: E501
)
from tests.e2e.test_reboot_hooks_simulated import (
    test_a_hook_answered_lets_the_node_reboot_and_one_never_answered_fails_and_halts as test_reboot_hooks,  # noqa: E501
)
from tests.e2e.test_rollout import (
    test_six_nodes_with_limit_two_all_update_cleanly as test_six_node_rollout,
)
from tests.e2e.test_simulated_probes import (
    test_healthy_nodes_pass_their_probe_and_an_unhealthy_one_fails_it_and_halts as test_probes,
)
from tests.realcluster.conftest import KWOK_ANNOTATION, SCRIPT
from tests.support.control_plane.versions import default_cache

pytestmark = pytest.mark.timeout(300)  # a real API server is slower than memory; `up` too
SIMULATED = "brupop.bottlerocket.aws/simulated=true"
NAMESPACE = "brupop-bottlerocket-aws"

__all__ = [
    "test_blocked_drain",
    "test_canary_soak",
    "test_chaos_kills",
    "test_controller_restart",
    "test_health_gate_halt",
    "test_notifications",
    "test_pause_and_resume",
    "test_probes",
    "test_reboot_hooks",
    "test_six_node_rollout",
    "test_zones",
]


@pytest.fixture(scope="module")
def own_kubeconfig(tmp_path_factory: pytest.TempPathFactory) -> Iterator[Path]:
    """A control plane for this module alone: `up` in a temporary folder, `down` after."""
    missing = default_cache().missing()
    if missing:
        pytest.fail(f"{', '.join(missing)} not built: run scripts/control-plane build", False)
    folder = tmp_path_factory.mktemp("simulate-control-plane")
    started = subprocess.run([SCRIPT, "up", folder], capture_output=True, text=True, timeout=300)
    try:
        if started.returncode != 0:
            pytest.fail(f"control-plane up failed:\n{started.stderr}", pytrace=False)
        yield folder / "kubeconfig"
    finally:
        subprocess.run([SCRIPT, "down", folder], capture_output=True, timeout=120, check=True)


@pytest.fixture
def core(own_kubeconfig: Path) -> Iterator[client.CoreV1Api]:
    api = config.new_client_from_config(config_file=str(own_kubeconfig))
    with api:
        yield client.CoreV1Api(api)


@pytest.fixture
def simulate(tmp_path: Path, own_kubeconfig: Path) -> Simulate:
    """The e2e scenarios' fixture, on the real backend."""
    return Simulate(tmp_path, backend=("--kubeconfig", str(own_kubeconfig)))


def forbidden_lines(log: Path) -> list[str]:
    """The cluster log's lines (controller and apiserver) that report a 403."""
    text = log.read_text(encoding="utf-8", errors="replace")
    return [line for line in text.splitlines() if "403" in line and "Forbidden" in line]


@pytest.mark.e2e
def test_four_nodes_roll_over_a_real_api_server_with_rbac_and_leave_nothing_behind(
    simulate: Simulate, core: client.CoreV1Api
) -> None:
    run = simulate("--nodes", "4", "--max-concurrent", "2", "--timeout", "90")

    assert run.returncode == 0, explain(run)
    assert run.last_line.startswith("OK: 4/4 nodes updated 1.19.0 -> 1.20.0"), run.last_line
    assert run.report["max_concurrent_observed"] <= 2
    for node in run.report["nodes"]:
        assert node["final_version"] == "1.20.0" and node["reboots"] == 1, node
    assert forbidden_lines(run.log_dir / "cluster.log") == []
    assert core.list_node(label_selector=SIMULATED).items == []
    assert NAMESPACE not in [n.metadata.name for n in core.list_namespace().items]


@pytest.mark.e2e
def test_a_cluster_holding_a_node_simulate_did_not_create_is_refused_with_one_line(
    tmp_path: Path, own_kubeconfig: Path, core: client.CoreV1Api
) -> None:
    foreign = client.V1Node(
        metadata=client.V1ObjectMeta(name="someone-elses-node", annotations=KWOK_ANNOTATION)
    )
    core.create_node(foreign)
    try:
        run = Simulate(tmp_path, backend=("--kubeconfig", str(own_kubeconfig)))("--nodes", "2")
    finally:
        core.delete_node("someone-elses-node")

    assert run.returncode == 2, explain(run)
    lines = run.stderr.strip().splitlines()
    assert len(lines) == 1, run.stderr
    assert "someone-elses-node" in lines[0] and "did not create" in lines[0], lines[0]
    assert "Traceback" not in run.stdout + run.stderr
    assert NAMESPACE not in [n.metadata.name for n in core.list_namespace().items]
    assert json.dumps(run.report) == "{}", "a refused run writes no report"
