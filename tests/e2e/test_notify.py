"""`brupop simulate --notify URL` sends the run's notifications to a webhook: a receiver on
loopback gets the rollout's start, each node's update, the pause and the resume, and the finish,
each in the documented json schema and naming the simulated cluster."""

from __future__ import annotations

from pathlib import Path

import pytest

from tests.e2e.simulate_run import explain, run_simulate
from tests.support.webhook_receiver import running_receiver, validate_v1

POLICY = """\
apiVersion: brupop.bottlerocket.aws/v1
kind: BottlerocketUpdatePolicy
metadata:
  name: default
spec:
  paused: false
"""


@pytest.mark.e2e
def test_simulate_notify_sends_the_runs_notifications_to_a_webhook(tmp_path: Path) -> None:
    policy = tmp_path / "policy.yaml"
    policy.write_text(POLICY)
    with running_receiver() as receiver:
        run = run_simulate(
            tmp_path, "--nodes", "3", "--max-concurrent", "1", "--policy", str(policy),
            "--pause-at", "0.5", "--resume-at", "4", "--notify", receiver.url, "--timeout", "100",
        )  # fmt: skip
        assert run.returncode == 0, explain(run)
        kinds = receiver.kinds()
    assert kinds[0] == "rollout_started", kinds
    assert kinds.count("node_updated") == 3, kinds
    assert kinds.index("fleet_paused") < kinds.index("fleet_resumed"), kinds
    assert kinds[-1] == "rollout_finished", kinds
    for body in receiver.bodies:
        validate_v1(body)
        assert body["cluster"] == "brupop-simulate"
    assert receiver.bodies[-1]["counts"]["updated"] == 3


@pytest.mark.e2e
def test_simulate_refuses_a_notify_url_that_is_not_http(tmp_path: Path) -> None:
    run = run_simulate(tmp_path, "--nodes", "1", "--notify", "ftp://example/hook")
    assert run.returncode == 2, explain(run)
    assert "--notify" in run.stderr
