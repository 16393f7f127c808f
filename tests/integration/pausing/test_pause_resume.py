"""`brupop pause` and `brupop resume` with a kubeconfig, over real HTTP against the API emulator:
one line saying what changed and exit 0; one line saying what to do and exit 1 when the cluster
cannot be changed; exit 2 naming the flag for a bad argument."""

from __future__ import annotations

from collections.abc import Iterator
from pathlib import Path
from typing import Any

import kmock
import pytest

from brupop.cli import main as cli
from brupop.cli.pausing import pause, resume
from tests.support.kube_api_rules import NODES, POLICIES, status_body
from tests.support.kube_emulator import KubeEmulator
from tests.support.kube_emulator_server import EmulatorServer
from tests.support.kubeconfig import write_kubeconfig
from tests.support.ports import free_port

NS = "brupop-bottlerocket-aws"
POLICY_PATH = f"/apis/brupop.bottlerocket.aws/v1/namespaces/{NS}/bottlerocketupdatepolicies"
LABEL = "brupop.bottlerocket.aws/paused"
HALTED_STATUS = {
    "phase": "Halted",
    "message": "Halted: node-b failed its health gate (nodeReady).",
    "observedGeneration": 1,
    "haltedAt": "2026-11-30T09:00:00Z",
    "haltReason": {"node": "node-b", "check": "nodeReady", "detail": "NotReady for 600 s"},
    "failures": 1,
}


@pytest.fixture
def emulator(tmp_path: Path, monkeypatch: pytest.MonkeyPatch) -> Iterator[KubeEmulator]:
    """The API emulator on loopback, and a kubeconfig for it in $KUBECONFIG (not in a pod)."""
    with EmulatorServer() as server:
        monkeypatch.setenv("KUBECONFIG", str(write_kubeconfig(tmp_path / "kc", server.url)))
        monkeypatch.delenv("KUBERNETES_SERVICE_HOST", raising=False)
        yield server.emulator


def _apply(emulator: KubeEmulator, spec: dict[str, Any], status: dict[str, Any] | None) -> None:
    obj: dict[str, Any] = {
        "apiVersion": "brupop.bottlerocket.aws/v1",
        "kind": "BottlerocketUpdatePolicy",
        "metadata": {"name": "default", "namespace": NS},
        "spec": spec,
    }
    if status is not None:
        obj["status"] = status
    emulator.put_object(POLICIES, obj)


def _stored(emulator: KubeEmulator) -> dict[str, Any]:
    found = emulator.stored(POLICIES, NS, "default")
    assert found is not None
    return found


def _writes(emulator: KubeEmulator) -> list[kmock.Request]:
    return [r for r in emulator.requests if str(r.method.value).upper() in ("POST", "PATCH")]


def _one_line(text: str) -> str:
    assert text.count("\n") == 1 and "Traceback" not in text
    return text.strip()


# --- the fleet --------------------------------------------------------------------------------


def test_pause_without_a_policy_creates_one_that_changes_nothing_but_paused_and_says_so(
    emulator: KubeEmulator, capsys: pytest.CaptureFixture[str]
) -> None:
    assert pause.main([]) == 0

    out = _one_line(capsys.readouterr().out)
    assert out == (
        f"fleet paused (policy default created in namespace {NS} with haltAfterFailures 1000, "
        "finishBy false and capacityCheck false, as without a policy; brupop resume deletes it)"
    )
    stored = _stored(emulator)
    assert stored["spec"] == {
        "paused": True,
        "haltAfterFailures": 1000,
        "finishBy": False,
        "capacityCheck": False,
    }
    assert stored["metadata"]["annotations"] == {
        "brupop.bottlerocket.aws/created-by": "brupop-pause"
    }


def test_resume_deletes_the_policy_its_pause_created(
    emulator: KubeEmulator, capsys: pytest.CaptureFixture[str]
) -> None:
    assert pause.main([]) == 0
    capsys.readouterr()
    assert resume.main([]) == 0

    out = _one_line(capsys.readouterr().out)
    assert out == (
        f"fleet resumed (policy default, created by brupop pause, deleted from namespace {NS}: "
        "the controller's environment settings apply as before)"
    )
    assert emulator.stored(POLICIES, NS, "default") is None


def test_resume_keeps_a_policy_its_pause_created_once_someone_changed_it(
    emulator: KubeEmulator, capsys: pytest.CaptureFixture[str]
) -> None:
    assert pause.main([]) == 0
    edited = _stored(emulator)
    edited["spec"]["canary"] = {"count": 1}
    emulator.put_object(POLICIES, edited)

    assert resume.main([]) == 0

    assert _stored(emulator)["spec"]["paused"] is False
    assert _stored(emulator)["spec"]["canary"] == {"count": 1}


def test_pause_sets_paused_and_keeps_the_rest_of_the_policy(
    emulator: KubeEmulator, capsys: pytest.CaptureFixture[str]
) -> None:
    _apply(emulator, {"haltAfterFailures": 3, "canary": {"count": 2}}, None)

    assert cli.main(["pause"]) == 0

    assert _one_line(capsys.readouterr().out) == f"fleet paused (policy default in namespace {NS})"
    assert _stored(emulator)["spec"] == {
        "haltAfterFailures": 3,
        "canary": {"count": 2},
        "paused": True,
    }
    (patch,) = _writes(emulator)
    assert patch.data["metadata"]["resourceVersion"]  # guarded against concurrent writers


def test_pausing_a_paused_fleet_writes_nothing_and_says_so(
    emulator: KubeEmulator, capsys: pytest.CaptureFixture[str]
) -> None:
    _apply(emulator, {"paused": True}, None)

    assert pause.main([]) == 0

    assert "already paused" in _one_line(capsys.readouterr().out)
    assert _writes(emulator) == []


def test_resume_without_a_policy_creates_none(
    emulator: KubeEmulator, capsys: pytest.CaptureFixture[str]
) -> None:
    assert resume.main([]) == 0

    out = _one_line(capsys.readouterr().out)
    assert out == f"fleet not paused (no policy default in namespace {NS}); nothing changed"
    assert emulator.stored(POLICIES, NS, "default") is None


def test_resume_clears_the_pause_and_the_halt_and_names_it(
    emulator: KubeEmulator, capsys: pytest.CaptureFixture[str]
) -> None:
    _apply(emulator, {"paused": True, "haltAfterFailures": 2}, HALTED_STATUS)

    assert cli.main(["resume"]) == 0

    out = _one_line(capsys.readouterr().out)
    assert out == (
        f"fleet resumed, halt cleared (node-b failed nodeReady) (policy default in namespace {NS})"
    )
    stored = _stored(emulator)
    assert stored["spec"] == {"paused": False, "haltAfterFailures": 2}
    status = stored["status"]
    assert (status["phase"], status["failures"], status["observedGeneration"]) == ("Idle", 0, 1)
    assert "haltedAt" not in status and "haltReason" not in status
    assert status["message"].startswith("Resumed")
    status_patch = next(r for r in _writes(emulator) if r.url.path.endswith("/status"))
    assert status_patch.data["metadata"]["resourceVersion"]


def test_resume_of_a_halt_alone_leaves_the_spec_alone(
    emulator: KubeEmulator, capsys: pytest.CaptureFixture[str]
) -> None:
    _apply(emulator, {"paused": False}, HALTED_STATUS)
    generation = _stored(emulator)["metadata"]["generation"]

    assert resume.main([]) == 0

    assert "halt cleared" in capsys.readouterr().out
    assert [r.url.path for r in _writes(emulator)] == [f"{POLICY_PATH}/default/status"]
    assert _stored(emulator)["metadata"]["generation"] == generation


def test_resume_of_a_running_fleet_writes_nothing(
    emulator: KubeEmulator, capsys: pytest.CaptureFixture[str]
) -> None:
    _apply(emulator, {"paused": False}, {"phase": "Rolling", "message": "Rolling."})

    assert resume.main([]) == 0

    assert "nothing changed" in _one_line(capsys.readouterr().out)
    assert _writes(emulator) == []


def test_a_halt_the_controller_writes_during_resume_is_reread_and_cleared(
    emulator: KubeEmulator, capsys: pytest.CaptureFixture[str]
) -> None:
    _apply(emulator, {}, HALTED_STATUS)
    second = {**HALTED_STATUS, "haltReason": {"node": "node-c", "check": "httpProbe"}}

    def controller_writes_meanwhile(_: object) -> None:
        _apply(emulator, {}, second)

    emulator[f"patch {POLICY_PATH}/default/status"][:1] >> controller_writes_meanwhile

    assert resume.main([]) == 0

    assert "(node-c failed httpProbe)" in capsys.readouterr().out
    status = _stored(emulator)["status"]
    assert status["phase"] == "Idle" and "haltReason" not in status
    patches = [r for r in _writes(emulator) if r.url.path.endswith("/status")]
    assert len(patches) == 2
    versions = [p.data["metadata"]["resourceVersion"] for p in patches]
    assert versions[0] != versions[1]


def test_a_policy_that_never_stops_changing_gives_up_after_a_bound_with_exit_1(
    emulator: KubeEmulator, capsys: pytest.CaptureFixture[str]
) -> None:
    _apply(emulator, {}, HALTED_STATUS)
    conflict = status_body(409, "Conflict", "the object has been modified")
    emulator[f"patch {POLICY_PATH}/default/status"] << 409 << conflict

    assert resume.main([]) == 1

    err = _one_line(capsys.readouterr().err)
    assert "kept changing" in err and "run the command again" in err
    assert len([r for r in _writes(emulator) if r.url.path.endswith("/status")]) == 5
    assert _stored(emulator)["status"]["phase"] == "Halted"


# --- one node ---------------------------------------------------------------------------------


def test_pause_and_resume_of_one_node_set_and_remove_its_label(
    emulator: KubeEmulator, capsys: pytest.CaptureFixture[str]
) -> None:
    emulator.add_node("ip-10-0-0-1.ec2.internal", labels={"zone": "a"})

    assert pause.main(["--node", "ip-10-0-0-1.ec2.internal"]) == 0
    out = _one_line(capsys.readouterr().out)
    assert out == f"node ip-10-0-0-1.ec2.internal paused (label {LABEL}=true)"
    node = emulator.stored(NODES, None, "ip-10-0-0-1.ec2.internal")
    assert node is not None and node["metadata"]["labels"] == {"zone": "a", LABEL: "true"}
    assert emulator.stored(POLICIES, NS, "default") is None  # the fleet is left alone

    assert resume.main(["--node", "ip-10-0-0-1.ec2.internal"]) == 0
    out = _one_line(capsys.readouterr().out)
    assert out == f"node ip-10-0-0-1.ec2.internal resumed (label {LABEL} removed)"
    node = emulator.stored(NODES, None, "ip-10-0-0-1.ec2.internal")
    assert node is not None and node["metadata"]["labels"] == {"zone": "a"}


def test_an_unknown_node_is_one_line_and_exit_1(
    emulator: KubeEmulator, capsys: pytest.CaptureFixture[str]
) -> None:
    assert pause.main(["--node", "node-x"]) == 1
    err = _one_line(capsys.readouterr().err)
    assert "has no node 'node-x'" in err and "kubectl get nodes" in err


# --- what goes wrong ---------------------------------------------------------------------------


def test_a_user_the_api_refuses_is_told_which_rights_are_missing(
    emulator: KubeEmulator, capsys: pytest.CaptureFixture[str]
) -> None:
    refusal = status_body(403, "Forbidden", "bottlerocketupdatepolicies is forbidden")
    emulator[f"get {POLICY_PATH}/default"] << 403 << refusal

    assert pause.main([]) == 1

    err = _one_line(capsys.readouterr().err)
    assert err.startswith("brupop pause: the Kubernetes API at http://127.0.0.1:")
    assert "needs `get`, `create`, `patch` and `delete` on `bottlerocketupdatepolicies`" in err
    assert emulator.stored(POLICIES, NS, "default") is None


def test_a_user_who_may_not_label_nodes_is_told_so(
    emulator: KubeEmulator, capsys: pytest.CaptureFixture[str]
) -> None:
    emulator.add_node("node-a")
    refusal = status_body(403, "Forbidden", 'nodes "node-a" is forbidden')
    emulator["patch /api/v1/nodes/node-a"] << 403 << refusal

    assert resume.main(["--node", "node-a"]) == 0  # not labelled: nothing to remove
    capsys.readouterr()
    assert pause.main(["--node", "node-a"]) == 1
    assert "needs `get` and `patch` on `nodes`" in _one_line(capsys.readouterr().err)


def test_without_the_policy_resource_it_asks_whether_brupop_is_installed(
    emulator: KubeEmulator, capsys: pytest.CaptureFixture[str]
) -> None:
    missing = status_body(404, "NotFound", "the server could not find the requested resource")
    emulator[f"post {POLICY_PATH}"] << 404 << missing

    assert pause.main([]) == 1
    err = _one_line(capsys.readouterr().err)
    assert f"no BottlerocketUpdatePolicy resource in namespace '{NS}'" in err
    assert "--namespace" in err


def test_an_unreachable_api_is_one_line_naming_it(
    tmp_path: Path, monkeypatch: pytest.MonkeyPatch, capsys: pytest.CaptureFixture[str]
) -> None:
    url = f"http://127.0.0.1:{free_port()}"
    monkeypatch.setenv("KUBECONFIG", str(write_kubeconfig(tmp_path / "kc", url)))
    monkeypatch.delenv("KUBERNETES_SERVICE_HOST", raising=False)

    assert resume.main(["--timeout", "5"]) == 1

    err = _one_line(capsys.readouterr().err)
    assert f"the Kubernetes API at {url} does not answer" in err
    assert "kubeconfig's context" in err


def test_without_any_configuration_it_says_how_to_get_one(
    tmp_path: Path, monkeypatch: pytest.MonkeyPatch, capsys: pytest.CaptureFixture[str]
) -> None:
    monkeypatch.delenv("KUBECONFIG", raising=False)
    monkeypatch.setenv("HOME", str(tmp_path))  # no ~/.kube/config
    monkeypatch.delenv("KUBERNETES_SERVICE_HOST", raising=False)

    assert pause.main([]) == 2

    err = _one_line(capsys.readouterr().err)
    assert err.startswith("brupop pause: no kubeconfig: ~/.kube/config does not exist")
    assert "--kubeconfig FILE" in err and "KUBECONFIG" in err


@pytest.mark.parametrize(
    ("argv", "flag"),
    [
        (["--node", "Node_A"], "--node"),
        (["--node", "a" * 254], "--node"),
        (["--namespace", "bad ns!"], "--namespace"),
        (["--timeout", "0"], "--timeout"),
    ],
)
def test_a_bad_argument_is_exit_2_naming_the_flag(
    argv: list[str], flag: str, capsys: pytest.CaptureFixture[str]
) -> None:
    for command in (pause, resume):
        with pytest.raises(SystemExit) as stopped:
            command.main(argv)
        assert stopped.value.code == 2
        assert f"argument {flag}:" in capsys.readouterr().err
