"""A real node's reboot (what the host emulator does when an agent reboots its host): the
node's containers get SIGTERM and their exit is graceful, the kubelet and containerd come back,
and the kubelet starts the pods again."""

from __future__ import annotations

import subprocess

import pytest

from tests.realnode.conftest import SCRIPT, RealCluster
from tests.realnode.workloads import create, log_files, log_lines, python_pod
from tests.support.polling import wait_until

# A cluster with real nodes takes a minute or more to start on a loaded machine.
pytestmark = pytest.mark.timeout(900)

GRACEFUL = """
import signal, sys, time

def stop(number, frame):
    print("stopping on SIGTERM", flush=True)
    sys.exit(0)
signal.signal(signal.SIGTERM, stop)
print("started", flush=True)
while True:
    time.sleep(1)
"""


def test_a_reboot_stops_the_containers_with_sigterm_and_the_kubelet_starts_them_again(
    real_cluster: RealCluster,
) -> None:
    node = real_cluster.nodes[1]
    core = real_cluster.core
    create(core, python_pod("graceful", node, GRACEFUL, restart="Always"))
    folder = real_cluster.node_folder(node)
    wait_until(
        lambda: any("started" in log_lines(path) for path in log_files(folder, "graceful")),
        "the pod's first start",
        seconds=180,
        interval=0.5,
    )
    rebooted = subprocess.run(
        [SCRIPT, "reboot", real_cluster.folder, node, "--grace", "20"],
        capture_output=True,
        text=True,
        timeout=300,
    )
    assert rebooted.returncode == 0, rebooted.stdout + rebooted.stderr
    first_run = log_lines(log_files(folder, "graceful")[0])
    assert first_run[-1] == "stopping on SIGTERM"

    def restarted() -> bool:
        status = core.read_namespaced_pod("graceful", "default").status
        statuses = status.container_statuses or []
        return bool(statuses) and statuses[0].ready and statuses[0].restart_count >= 1

    wait_until(
        restarted, "the kubelet restarting the pod after the reboot", seconds=240, interval=0.5
    )
    last = core.read_namespaced_pod("graceful", "default").status.container_statuses[0]
    assert last.last_state.terminated.exit_code == 0
