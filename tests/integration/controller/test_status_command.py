"""`brupop status` against a controller's HTTP surface: a kubectl-like table whose REASON
column explains every waiting node, and JSON for scripts."""

from __future__ import annotations

import json
import re
import socket
from collections.abc import Iterator

import pytest

from brupop.cli.status.main import main
from brupop.cli.status.table import format_reports
from brupop.domain.shadow import ShadowSpec
from brupop.domain.states import UpdateState
from brupop.services.controller.service import ControllerService
from tests.support.controller_surface import serve_controller
from tests.unit.services.controller.fleet import NEW, OLD, Fleet


@pytest.fixture
def fleet() -> Fleet:
    """Four nodes: one updating, one backing off, one up to date, one waiting for a slot."""
    fleet = Fleet(0)
    fleet.add_node("busy")
    fleet.add_node("crashed")
    fleet.add_node("current", current=NEW, target=NEW)
    fleet.add_node("waiting")
    crashed = fleet.shadow("crashed")
    assert crashed.status is not None
    fleet.cluster.shadows.update_status(
        crashed.name,
        crashed.status.model_copy(
            update={"crash_count": 2, "state_transition_failure_timestamp": fleet.clock.now()}
        ),
    )
    return fleet


@pytest.fixture
def served(fleet: Fleet) -> Iterator[tuple[str, ControllerService]]:
    with serve_controller(fleet) as served:
        yield served


def test_the_table_has_the_kubectl_columns_and_a_reason_for_every_node(
    served: tuple[str, ControllerService], capsys: pytest.CaptureFixture[str]
) -> None:
    url, _ = served
    assert main(["--url", url]) == 0
    lines = capsys.readouterr().out.splitlines()
    assert re.split(r"\s{2,}", lines[0]) == [
        "NODE",
        "STATE",
        "VERSION",
        "TARGET STATE",
        "TARGET VERSION",
        "CRASH COUNT",
        "REASON",
    ]
    rows = {line.split()[0]: line for line in lines[1:]}
    assert "starting the update to 1.20.0" in rows["busy"]
    assert "backing off until 2026-01-05T10:05:00+00:00 (crash count 2)" in rows["crashed"]
    assert rows["current"].endswith("no update offered")
    assert "concurrency full (1/1 nodes updating); 1.20.0 offered" in rows["waiting"]


def test_json_output_gives_scripts_every_row_with_its_reason_code(
    served: tuple[str, ControllerService], capsys: pytest.CaptureFixture[str]
) -> None:
    url, _ = served
    assert main(["--url", url, "-o", "json"]) == 0
    document = json.loads(capsys.readouterr().out)
    assert document["leader"] is True
    assert document["max_concurrent_update"] == "1"
    assert document["schedule"] == {
        "expression": "* * * * * * *",
        "kind": "windowed",
        "time_zone": "UTC",
    }
    reasons = {row["node"]: (row["reason"], row["waiting"]) for row in document["nodes"]}
    assert reasons == {
        "busy": ("starting", False),
        "crashed": ("backing_off", True),
        "current": ("no_update", True),
        "waiting": ("concurrency_full", True),
    }


def test_the_metrics_endpoint_keeps_the_original_names(
    served: tuple[str, ControllerService], fleet: Fleet
) -> None:
    import urllib.request

    url, _ = served
    with urllib.request.urlopen(f"{url}/metrics", timeout=5) as response:
        text = response.read().decode()
    assert 'brupop_hosts_state{state="Idle"} 4.0' in text
    assert f'brupop_hosts_version{{bottlerocket_version="{OLD}"}} 3.0' in text
    assert 'brupop_nodes_waiting{reason="concurrency_full"} 1.0' in text
    assert "brupop_update_attempts_total 1.0" in text


def test_an_unreachable_controller_is_one_line_and_exit_1(
    capsys: pytest.CaptureFixture[str],
) -> None:
    with socket.socket() as probe:
        probe.bind(("127.0.0.1", 0))
        port = probe.getsockname()[1]
    assert main(["--url", f"http://127.0.0.1:{port}", "--timeout", "2"]) == 1
    err = capsys.readouterr().err
    assert err.count("\n") == 1 and err.startswith("brupop status: cannot read")


def test_the_same_table_is_available_in_process(served: tuple[str, ControllerService]) -> None:
    _, controller = served
    table = format_reports(controller.reports())
    assert table.splitlines()[0].startswith("NODE")
    assert "no update offered" in table


def test_a_node_in_a_timed_out_transition_says_so(fleet: Fleet) -> None:
    busy = fleet.shadow("busy")
    stamped = ShadowSpec(
        state=UpdateState.REBOOTED_INTO_UPDATE,
        state_transition_timestamp=fleet.clock.now(),
        version=NEW,
    )
    fleet.cluster.shadows.replace_spec(busy.name, stamped, busy.resource_version)
    observer = fleet.controller(1)
    fleet.clock.advance(601)
    observer.elector.ensure = lambda: False  # type: ignore[method-assign]  # a follower only
    observer.tick()
    row = {r.node: r for r in observer.reports()}["busy"]
    assert row.detail == "timed out in RebootedIntoUpdate (limit 600 s)"


@pytest.mark.parametrize("timeout", ["-1", "0", "nan", "inf", "soon"])
def test_an_unusable_timeout_is_a_usage_error_naming_the_flag(
    timeout: str, capsys: pytest.CaptureFixture[str]
) -> None:
    with pytest.raises(SystemExit) as stopped:
        main(["--url", "http://127.0.0.1:9", f"--timeout={timeout}"])

    assert stopped.value.code == 2
    assert "argument --timeout:" in capsys.readouterr().err
