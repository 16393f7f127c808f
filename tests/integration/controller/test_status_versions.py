"""`brupop status` and the policy's `version` section: the controller's `/status` lists each
offered version with when it was first seen and when it becomes eligible, and the table says
it for every version that waits."""

from __future__ import annotations

import json
from typing import Any

import pytest

from brupop.cli.status.main import main
from tests.support.controller_surface import serve_controller
from tests.unit.services.controller.fleet import NEW, Fleet


def _fleet(version: dict[str, Any]) -> Fleet:
    fleet = Fleet(2)
    fleet.cluster.policies.apply({"metadata": {"name": "default"}, "spec": {"version": version}})
    return fleet


def test_the_table_says_when_a_version_too_new_becomes_eligible(
    capsys: pytest.CaptureFixture[str],
) -> None:
    with serve_controller(_fleet({"minReleaseAgeHours": 24})) as (url, _):
        capsys.readouterr()  # the controller's log lines of its first pass
        assert main(["--url", url]) == 0
    lines = capsys.readouterr().out.splitlines()
    line = (
        f"Version {NEW} (2 nodes): eligible at 2026-01-06T10:00:00+00:00 "
        "(first offered 2026-01-05T10:00:00+00:00)"
    )
    assert line in lines
    assert lines[lines.index(line) + 1].startswith("NODE")  # the last line above the table


def test_the_table_names_the_pin_that_holds_a_version(
    capsys: pytest.CaptureFixture[str],
) -> None:
    with serve_controller(_fleet({"pin": "1.19.5"})) as (url, _):
        capsys.readouterr()  # the controller's log lines of its first pass
        assert main(["--url", url]) == 0
    assert f"Version {NEW} (2 nodes): pinned to 1.19.5" in capsys.readouterr().out


def test_the_json_lists_each_version_with_its_first_sighting_and_eligibility(
    capsys: pytest.CaptureFixture[str],
) -> None:
    with serve_controller(_fleet({"minReleaseAgeHours": 24})) as (url, _):
        capsys.readouterr()  # the controller's log lines of its first pass
        assert main(["--url", url, "-o", "json"]) == 0
    document = json.loads(capsys.readouterr().out)
    assert document["versions"] == [
        {
            "version": NEW,
            "first_seen": "2026-01-05T10:00:00+00:00",
            "eligible_at": "2026-01-06T10:00:00+00:00",
            "nodes": 2,
            "reason": "release_too_new",
            "waiting": f"{NEW} first offered 2026-01-05T10:00:00+00:00; "
            "eligible at 2026-01-06T10:00:00+00:00",
        }
    ]


def test_without_a_policy_object_no_version_line_is_shown(
    capsys: pytest.CaptureFixture[str],
) -> None:
    with serve_controller(Fleet(2)) as (url, _):
        capsys.readouterr()  # the controller's log lines of its first pass
        assert main(["--url", url]) == 0
    assert capsys.readouterr().out.startswith("NODE")
