"""A mixed fleet: updatable, locked-down and FIPS hosts update; a variant without in-place
updates, an end-of-life variant and a host answering as no Bottlerocket does stay Idle with their
own reason, never started, and the run is a success whose verdict says how many could not
update and why. A FIPS host that boots in the standard mode after its update fails it, stays
cordoned and is named."""

from __future__ import annotations

import pytest

from tests.e2e.simulate_run import Simulate, explain

KINDS = {
    "node-02": "fips",
    "node-03": "lockdown",
    "node-04": "no-updates",
    "node-05": "eol",
    "node-06": "unexpected",
}
CANNOT = {
    "node-04": "no_in_place_updates",
    "node-05": "no_offer_for_variant",
    "node-06": "unexpected_host_answer",
}


@pytest.mark.e2e
@pytest.mark.timeout(300)  # seven simulated nodes, on a loaded machine
def test_a_mixed_fleet_updates_what_it_can_and_names_why_not_the_rest(
    simulate: Simulate,
) -> None:
    flags = [flag for node, kind in KINDS.items() for flag in ("--host-kind", f"{node}={kind}")]
    run = simulate("--nodes", "7", "--max-concurrent", "2", *flags, "--timeout", "240")

    assert run.returncode == 0, explain(run)
    assert run.last_line.startswith("OK: 4/7 nodes updated"), run.last_line
    assert run.last_line.endswith(
        "; 3 cannot update: 1 no_in_place_updates, 1 no_offer_for_variant, 1 unexpected_host_answer"
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
    odd = [e for e in run.agent_events("node-06") if e.get("event") == "host.classified"]
    assert odd and odd[0]["note"] == "settings answered 403", odd


@pytest.mark.e2e
@pytest.mark.timeout(300)
def test_a_fips_host_that_loses_fips_in_its_update_fails_stays_cordoned_and_is_named(
    simulate: Simulate,
) -> None:
    # Three nodes, one at a time: the node left cordoned holds no workload, so the others'
    # drains always have a node to move the PodDisruptionBudget's pods to.
    run = simulate(
        "--nodes", "3", "--max-concurrent", "1", "--host-kind", "node-01=fips-lost",
        "--timeout", "240",
    )  # fmt: skip

    assert run.returncode != 0, explain(run)
    assert run.last_line.endswith("node-01 left cordoned"), run.last_line
    (lost,) = [node for node in run.report["nodes"] if node["name"] == "node-01"]
    assert lost["unschedulable"] is True, lost
    assert lost["crash_count"] == 1, lost
    assert lost["final_version"] == "1.20.0", lost
    others = [node for node in run.report["nodes"] if node["name"] != "node-01"]
    assert all(node["final_version"] == "1.20.0" for node in others), others
    (failed,) = [e for e in run.agent_events("node-01") if e.get("event") == "update.step_failed"]
    assert failed["error"] == "BootModeChangedError", failed
