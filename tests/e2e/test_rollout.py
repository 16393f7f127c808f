"""A healthy fleet rolls to the new version within the concurrency limit, cleanly."""

from __future__ import annotations

import sys
from pathlib import Path

import pytest

from tests.e2e.simulate_run import Simulate, explain

REBOOT_EVENT = "node.rebooting_into_update"


@pytest.mark.e2e
def test_six_nodes_with_limit_two_all_update_cleanly(simulate: Simulate) -> None:
    run = simulate(
        "--nodes", "6", "--max-concurrent", "2",
        "--from-version", "1.19.0", "--to-version", "1.20.0", "--timeout", "90",
    )  # fmt: skip

    assert run.returncode == 0, explain(run)
    report = run.report
    assert report["ok"] is True
    assert report["max_concurrent_allowed"] == 2
    assert 1 <= report["max_concurrent_observed"] <= 2
    assert report["tracebacks"] == 0
    assert len(report["nodes"]) == 6
    for node in report["nodes"]:
        assert node["initial_version"] == "1.19.0"
        assert node["final_version"] == "1.20.0", node
        assert node["final_state"] == "Idle", node
        assert node["unschedulable"] is False, node
        assert node["reboots"] == 1, node
        assert node["agent_exit_codes"], node
        assert all(code == 0 for code in node["agent_exit_codes"]), node
        assert node["agent_peak_rss_kib"] > 0, node
        reboot_lines = [
            event
            for event in run.agent_events(node["name"])
            if event.get("event") == REBOOT_EVENT and event.get("level") == "info"
        ]
        assert len(reboot_lines) == 1, (node["name"], reboot_lines)
        assert "Traceback" not in run.agent_log(node["name"])
    assert run.last_line.startswith("OK: 6/6 nodes updated"), explain(run)


def test_a_bad_flag_stops_with_one_line_naming_it(simulate: Simulate) -> None:
    run = simulate("--max-concurrent", "0")

    assert run.returncode == 2
    assert run.stderr.strip().splitlines() == [
        "brupop simulate: --max-concurrent: 0 is outside 1..1000000"
    ]
    assert run.report == {}


@pytest.mark.e2e
def test_any_apiclient_honouring_the_emulator_contract_drives_the_fleet(
    simulate: Simulate, tmp_path: Path
) -> None:
    calls = tmp_path / "calls.log"
    apiclient = tmp_path / "my-apiclient"
    apiclient.write_text(
        "#!/bin/sh\n"
        f'echo "$BRUPOP_SIM_NODE_NAME $*" >> "{calls}"\n'
        f'exec "{sys.executable}" -m brupop.hostsim "$@"\n'
    )
    apiclient.chmod(0o755)

    run = simulate(
        "--nodes", "2", "--max-concurrent", "2", "--apiclient", str(apiclient), "--timeout", "60",
    )  # fmt: skip

    assert run.returncode == 0, explain(run)
    assert all(node["final_version"] == "1.20.0" for node in run.report["nodes"])
    called = calls.read_text().splitlines()
    assert any(line.startswith("node-01 raw -u /actions/reboot") for line in called)
    assert any(line.startswith("node-02 raw -u /actions/reboot") for line in called)
