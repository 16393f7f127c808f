"""`brupop plan` as a user meets it: its table, its JSON, its picture, one line for bad input."""

from __future__ import annotations

import json
from pathlib import Path

import pytest

from brupop.cli.plan.main import main
from tests.support.policy_file import write_policy_file

FLEET = ("--simulate", "--nodes", "4", "--pods-per-node", "node-01=3,node-02=0,node-03=2,node-04=1")


def test_a_simulated_fleet_is_planned_cheapest_first_in_a_table(
    capsys: pytest.CaptureFixture[str],
) -> None:
    assert main([*FLEET, "--max-concurrent", "2", "--duration", "300"]) == 0

    out = capsys.readouterr().out.splitlines()
    assert out[0].startswith("plan from ") and "each update 5m (as given)" in out[0]
    rows = [line.split() for line in out[2:]]
    assert [(row[0], row[1]) for row in rows] == [
        ("1", "node-02"),
        ("2", "node-04"),
        ("3", "node-03"),
        ("4", "node-01"),
    ]
    assert "concurrency_full until" in out[4]


def test_json_gives_every_node_with_its_order_times_and_holds(
    capsys: pytest.CaptureFixture[str],
) -> None:
    assert main([*FLEET, "--duration", "60", "--json"]) == 0

    document = json.loads(capsys.readouterr().out)
    assert document["expected_update_seconds"] == 60
    assert document["expected_update_source"] == "--duration"
    nodes = document["nodes"]
    assert [n["node"] for n in nodes] == ["node-02", "node-04", "node-03", "node-01"]
    assert [n["start_seconds"] for n in nodes] == [0.0, 60.0, 120.0, 180.0]
    assert nodes[1]["holds"][0]["reason"] == "concurrency_full"
    assert nodes[1]["holds"][0]["until_seconds"] == 60.0


def test_a_policy_file_is_planned_with_and_a_paused_one_starts_nothing(
    tmp_path: Path, capsys: pytest.CaptureFixture[str]
) -> None:
    policy = write_policy_file(tmp_path, "  paused: true\n")

    assert main([*FLEET, "--policy", policy, "--json"]) == 0

    document = json.loads(capsys.readouterr().out)
    assert document["policy"] == "policy"
    assert document["notes"][0].startswith("no node starts: the fleet is paused")
    assert all(n["outlook"] == "never" for n in document["nodes"])


def test_a_canary_selector_no_simulated_node_matches_is_a_note_naming_the_field(
    tmp_path: Path, capsys: pytest.CaptureFixture[str]
) -> None:
    canary = (
        '  canary:\n    selector: "brupop.bottlerocket.aws/canary=true"\n    soakSeconds: 1800\n'
    )
    policy = write_policy_file(tmp_path, canary)

    assert main([*FLEET, "--policy", policy, "--json"]) == 0

    assert json.loads(capsys.readouterr().out)["notes"] == [
        "spec.canary.selector: 'brupop.bottlerocket.aws/canary=true' picks none of the 4 "
        "opted-in nodes: there are no canaries"
    ]


def test_timeline_draws_the_plan(tmp_path: Path, capsys: pytest.CaptureFixture[str]) -> None:
    picture = tmp_path / "plan.svg"

    assert main([*FLEET, "--timeline", str(picture)]) == 0

    assert "node-03" in picture.read_text()
    assert f"timeline: {picture} (4 nodes)" in capsys.readouterr().err


def test_the_timeline_labels_a_planned_update_as_expected_not_as_staging(tmp_path: Path) -> None:
    picture = tmp_path / "plan.svg"

    assert main([*FLEET, "--timeline", str(picture)]) == 0

    drawn = picture.read_text()
    assert "expected update" in drawn
    assert "staging" not in drawn


@pytest.mark.parametrize(
    ("argv", "said"),
    [
        (["--nodes", "3"], "--nodes: describes a simulated fleet; add --simulate"),
        (["--simulate", "--nodes", "zero"], "--nodes: 'zero' is not an integer"),
        (["--simulate", "--duration", "0"], "--duration: 0 is outside"),
        (["--simulate", "--release-age-quorum", "0"], "--release-age-quorum: 0 is outside"),
        (
            ["--simulate", "--max-concurrent", "lots"],
            "--max-concurrent: 'lots' is neither an integer >= 1 nor 'unlimited'",
        ),
        (["--simulate", "--block-drain", "node-99"], "--block-drain: no node 'node-99'"),
        (["--simulate", "--timeline", "plan.txt"], "--timeline: plan.txt: the picture's name"),
    ],
)
def test_a_bad_flag_is_one_line_naming_it_and_exit_2(
    argv: list[str], said: str, capsys: pytest.CaptureFixture[str]
) -> None:
    assert main(argv) == 2

    err = capsys.readouterr().err
    assert err.count("\n") == 1 and err.startswith(f"brupop plan: {said}"), err


def test_a_bad_policy_file_is_one_line_and_exit_2(
    tmp_path: Path, capsys: pytest.CaptureFixture[str]
) -> None:
    bad = tmp_path / "policy.yaml"
    bad.write_text("garbage: [\n")

    assert main(["--simulate", "--policy", str(bad)]) == 2

    err = capsys.readouterr().err
    assert err.count("\n") == 1 and "--policy:" in err and "not valid YAML" in err


@pytest.mark.parametrize(
    "text",
    ["garbage: [\n", "[1, 2]\n", "apiVersion: v1\nclusters: 3\n", "{}\n"],
    ids=["broken-yaml", "a-list", "clusters-not-a-list", "empty"],
)
def test_an_unusable_kubeconfig_is_one_line_and_exit_2(
    text: str, tmp_path: Path, monkeypatch: pytest.MonkeyPatch, capsys: pytest.CaptureFixture[str]
) -> None:
    kubeconfig = tmp_path / "bad.kc"
    kubeconfig.write_text(text)
    monkeypatch.setenv("KUBECONFIG", str(kubeconfig))

    assert main([]) == 2
    assert main(["--kubeconfig", str(kubeconfig)]) == 2

    err = capsys.readouterr().err.splitlines()
    assert len(err) == 2 and all(line.startswith("brupop plan: ") for line in err), err
    assert "Traceback" not in "".join(err)


def test_a_kubeconfig_pointing_at_a_dead_server_is_one_short_line_and_exit_1(
    tmp_path: Path, capsys: pytest.CaptureFixture[str]
) -> None:
    kubeconfig = tmp_path / "dead.kc"
    kubeconfig.write_text(
        "apiVersion: v1\nkind: Config\ncurrent-context: x\n"
        "contexts: [{name: x, context: {cluster: c, user: u}}]\n"
        "clusters: [{name: c, cluster: {server: 'https://127.0.0.1:1'}}]\n"
        "users: [{name: u, user: {token: t}}]\n"
    )

    assert main(["--kubeconfig", str(kubeconfig), "--timeout", "2"]) == 1

    err = capsys.readouterr().err
    assert err.count("\n") == 1
    assert err.startswith("brupop plan: the Kubernetes API at https://127.0.0.1:1 does not answer")
    assert len(err) <= 260, err
