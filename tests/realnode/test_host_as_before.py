"""`down` leaves the host as `up --real-nodes` found it, after a pod ran on each node: the
links, addresses, mounts, iptables chains and rules, cgroups, sysctls and the runtimes'
hard-coded folders all equal a snapshot taken before `up`; and `down` again changes nothing."""

from __future__ import annotations

from pathlib import Path

import pytest
from kubernetes import client, config

from tests.realnode.conftest import down, up, wait_machine_free
from tests.realnode.workloads import create, python_pod, wait_phase
from tests.support.control_plane.real_nodes import host_snapshot

# A cluster with real nodes takes a minute or more to start on a loaded machine.
pytestmark = pytest.mark.timeout(900)

SAY = "print('ran')"


def test_down_leaves_the_host_as_before_up_even_after_pods_ran(
    machine_ready: None, tmp_path: Path
) -> None:
    folder = tmp_path / "cluster"
    wait_machine_free()
    before = host_snapshot.take()
    try:
        started = up(folder, 2)
        assert started.returncode == 0, started.stdout + started.stderr
        with config.new_client_from_config(config_file=str(folder / "kubeconfig")) as api:
            core = client.CoreV1Api(api)
            for index in range(2):
                create(core, python_pod(f"ran-{index}", f"real-node-{index}", SAY))
            for index in range(2):
                wait_phase(core, f"ran-{index}", "Succeeded", seconds=240)
        during = host_snapshot.take()
        assert host_snapshot.differences(before, during), "up changed nothing: the check is blind"
    finally:
        stopped = down(folder)
    assert stopped.returncode == 0, stopped.stderr
    assert host_snapshot.differences(before, host_snapshot.take()) == []
    again = down(folder)
    assert again.returncode == 0
    assert host_snapshot.differences(before, host_snapshot.take()) == []
