"""A mixed fleet: updatable and locked-down hosts update; a variant without in-place updates and
an end-of-life variant stay Idle with their own reason, never started, and the run is a success
whose verdict says how many could not update and why."""

from __future__ import annotations

import pytest

from tests.e2e.simulate_run import Simulate, explain

KINDS = {"node-03": "lockdown", "node-04": "no-updates", "node-05": "eol"}
CANNOT = {"node-04": "no_in_place_updates", "node-05": "no_offer_for_variant"}


@pytest.mark.e2e
def test_a_mixed_fleet_updates_what_it_can_and_names_why_not_the_rest(
    simulate: Simulate,
) -> None:
    flags = [flag for node, kind in KINDS.items() for flag in ("--host-kind", f"{node}={kind}")]
    run = simulate("--nodes", "6", "--max-concurrent", "2", *flags, "--timeout", "120")

    assert run.returncode == 0, explain(run)
    assert run.last_line.startswith("OK: 4/6 nodes updated"), run.last_line
    assert run.last_line.endswith(
        "; 2 cannot update: 1 no_in_place_updates, 1 no_offer_for_variant"
    ), run.last_line
    report = run.report
    assert report["tracebacks"] == 0
    for node in report["nodes"]:
        assert node["unschedulable"] is False, node
        assert all(code == 0 for code in node["agent_exit_codes"]), node
        if node["name"] not in CANNOT:
            assert node["final_version"] == "1.20.0", node  # the locked-down host too
            continue
        assert node["final_version"] == "1.19.0", node
        assert node["final_state"] == "Idle", node
        assert node["reason"].startswith(CANNOT[node["name"]]), node
        # Never started, never failed: no backoff against a host that cannot update.
        assert (node["started_at"], node["crash_count"], node["reboots"]) == (None, 0, 0), node
        assert {w["reason"] for w in node["wait_reasons"]} <= {CANNOT[node["name"]], "no_update"}
    # The host without in-place updates is never asked to look for updates.
    events = run.agent_events("node-04")
    assert not [e for e in events if str(e.get("event", "")).startswith("update_check")]
    (classified,) = [e for e in events if e.get("event") == "host.classified"]
    assert classified["host_kind"] == "no_in_place_updates", classified
    locked = [e for e in run.agent_events("node-03") if e.get("event") == "host.classified"]
    assert locked and locked[0]["host_kind"] == "locked_down", locked
