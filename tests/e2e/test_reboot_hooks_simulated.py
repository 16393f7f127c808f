"""`brupop simulate --policy ... --hook NAME[:SECONDS|:never]`: the emulated responder answers
the before-reboot hook, so the first node reboots; the after-reboot hook never answers, so the
node fails on the hook's timeout, the fleet halts, nothing starts after it and nothing is left
cordoned.

Nothing here depends on how fast this machine is: the hook that answers does so long before its
timeout, and the one that fails never answers at all.

It also runs with every host but node-01 answering its first call 15 s late
(`HOST_SPEEDS`): the same holds when agents report late."""

from __future__ import annotations

from typing import Any

import pytest

from tests.e2e.simulate_run import HOST_SPEEDS, Simulate, explain, late_hosts

SPEC = """\
  haltAfterFailures: 1
  hooks:
    beforeReboot: [ceph-noout]
    afterReboot: [change-ticket]
    timeoutSeconds: 15
"""


@pytest.mark.e2e
@HOST_SPEEDS
def test_a_hook_answered_lets_the_node_reboot_and_one_never_answered_fails_and_halts(
    simulate: Simulate, late: bool
) -> None:
    run = simulate(
        "--nodes", "3", "--max-concurrent", "1", "--timeout", "120",
        "--hook", "ceph-noout:0.5", "--hook", "change-ticket:never", *late_hosts(3, late=late),
        policy=SPEC,
    )  # fmt: skip

    assert run.returncode == 1, explain(run)
    report = run.report
    assert report["halted"] is True, explain(run)
    assert report["halt_reason"]["check"] == "afterRebootHook"
    assert "change-ticket" in report["halt_reason"]["detail"]
    nodes: dict[str, dict[str, Any]] = {n["name"]: n for n in report["nodes"]}
    first = nodes[report["halt_reason"]["node"]]
    assert first["hook_answers"] == ["before-reboot.ceph-noout"]
    assert first["reboots"] == 1, "the answered before-reboot hook let it reboot"
    assert first["final_version"] == "1.20.0"
    assert first["reboot_hook_failed"] is True
    for name, node in nodes.items():
        assert node["unschedulable"] is False, f"{name} left cordoned"
    others = [node for node in nodes.values() if node is not first]
    assert [node["started_at"] for node in others] == [None, None], "none starts after the halt"
    assert "afterRebootHook" in run.last_line, explain(run)
