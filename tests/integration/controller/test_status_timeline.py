"""`brupop status --timeline`: the rollout drawn from the shadows and their Events, read through
the Kubernetes API (the emulator, over real HTTP), with the limit from the controller's /status.

The shadows and Events are written the way the controller writes them (the real adapters),
with chosen times, so the picture's rows and phases can be checked."""

from __future__ import annotations

import subprocess
import sys
import xml.etree.ElementTree as ElementTree
from collections.abc import Iterator
from datetime import UTC, datetime, timedelta
from pathlib import Path

import pytest
from kubernetes.client import ApiClient, Configuration

from brupop.adapters.kubernetes.api.calls import ApiCalls
from brupop.adapters.kubernetes.resources.events import KubernetesEventRecorder
from brupop.adapters.kubernetes.resources.shadows import KubernetesShadowRepository
from brupop.adapters.kubernetes.resources.update_policies import KubernetesUpdatePolicyRepository
from brupop.cli.status.main import main
from brupop.domain.cluster.objects import ClusterEvent
from brupop.domain.policy.update_policy import UpdatePolicySpec
from brupop.domain.policy.update_policy_status import HaltReason, UpdatePolicyStatus
from brupop.domain.shadow import ShadowSpec, ShadowStatus
from brupop.domain.states import UpdateState as S
from tests.support.controller_surface import serve_controller
from tests.support.kube_api_rules import EVENTS
from tests.support.kube_emulator import KubeEmulator
from tests.support.kube_emulator_proxy import ServiceProxy
from tests.support.kube_emulator_server import EmulatorServer
from tests.support.kubeconfig import use_kubeconfig
from tests.unit.services.controller.fleet import Fleet

NS = "brupop-bottlerocket-aws"
SERVICE = "brupop-controller-server"
T0 = datetime(2026, 11, 30, 8, 0, 0, tzinfo=UTC)
OLD, NEW = "1.19.0", "1.20.0"
FAILED = "The agent failed on its way to StagedAndPerformedUpdate (crash count 1); back to Idle"
SVG_TEXT = "{http://www.w3.org/2000/svg}text"


@pytest.fixture
def emulated(monkeypatch: pytest.MonkeyPatch, tmp_path: Path) -> Iterator[EmulatorServer]:
    """The emulator, and a kubeconfig for it in $KUBECONFIG (not in a pod)."""
    with EmulatorServer(KubeEmulator()) as server:
        use_kubeconfig(monkeypatch, tmp_path / "kubeconfig", server.url)
        yield server


@pytest.fixture
def controller_url() -> Iterator[str]:
    """A controller's HTTP surface on loopback; its limit is 1."""
    with serve_controller(Fleet(1), tick=False) as (url, _):
        yield url


def _write_rollout(server: EmulatorServer) -> None:
    """node-01 updated, node-02 failed while staging (the fleet halted), node-03 rebooting;
    node-04 untouched."""
    configuration = Configuration()
    configuration.host = server.url
    calls = ApiCalls(ApiClient(configuration))
    shadows = KubernetesShadowRepository(calls, NS)
    recorder = KubernetesEventRecorder(calls, component="brupop-controller")

    def event(node: str, seconds: float, reason: str, message: str = "") -> None:
        told = ClusterEvent(f"brs-{node}", NS, reason, message or reason)
        server.emulator.put_object(
            EVENTS, recorder.event_object(told, T0 + timedelta(seconds=seconds))
        )

    def shadow(node: str, spec: ShadowSpec, status: ShadowStatus) -> None:
        created = shadows.create(node, f"uid-{node}")
        shadows.update_status(created.name, status)
        shadows.replace_spec(created.name, spec, None)

    def at(seconds: float) -> datetime:
        return T0 + timedelta(seconds=seconds)

    for seconds, reason in ((10, "UpdateStarted"), (40, "UpdateRebooting")):
        event("node-01", seconds, reason)
    for seconds, reason in ((100, "UpdateMonitoring"), (130, "UpdateCompleted")):
        event("node-01", seconds, reason)
    shadow("node-01", ShadowSpec(), ShadowStatus(current_version=NEW, target_version=NEW,
           current_state=S.IDLE))  # fmt: skip
    event("node-02", 140, "UpdateStarted")
    event("node-02", 150, "UpdateFailed", FAILED)
    shadow(
        "node-02",
        ShadowSpec(state=S.IDLE, state_transition_timestamp=at(150), version=NEW),
        ShadowStatus(current_version=OLD, target_version=NEW, current_state=S.IDLE,
                     crash_count=1, state_transition_failure_timestamp=at(150)),
    )  # fmt: skip
    event("node-03", 160, "UpdateStarted")
    # The Event of node-03's reboot has expired: the spec's own timestamp still tells it.
    shadow(
        "node-03",
        ShadowSpec(state=S.REBOOTED_INTO_UPDATE, state_transition_timestamp=at(200), version=NEW),
        ShadowStatus(current_version=OLD, target_version=NEW,
                     current_state=S.STAGED_AND_PERFORMED_UPDATE),
    )  # fmt: skip
    shadow("node-04", ShadowSpec(), ShadowStatus(current_version=OLD, target_version=NEW,
           current_state=S.IDLE))  # fmt: skip
    policies = KubernetesUpdatePolicyRepository(calls, NS)
    policies.create(UpdatePolicySpec())
    halt = HaltReason(node="node-02", check="nodeReady")
    policies.update_status(UpdatePolicyStatus(halted_at=at(151), halt_reason=halt))


def _texts(path: Path) -> list[str]:
    return ["".join(e.itertext()) for e in ElementTree.parse(path).iter(SVG_TEXT)]


def test_the_timeline_is_drawn_from_the_shadows_and_events_with_one_row_per_node(
    emulated: EmulatorServer,
    controller_url: str,
    tmp_path: Path,
    capsys: pytest.CaptureFixture[str],
) -> None:
    _write_rollout(emulated)
    ServiceProxy(emulated.emulator).add_service(
        NS, SERVICE, port_name="main", port=80, backend=controller_url
    )
    picture = tmp_path / "cluster.svg"

    assert main(["--timeline", str(picture)]) == 0

    out = capsys.readouterr()
    assert out.out == f"timeline: {picture} (4 nodes, 7 Events)\n", out
    texts = _texts(picture)
    assert [t for t in texts if t.startswith("node-")] == [
        "node-01",
        "node-02",
        "node-03",
        "node-04",
    ]
    for legend in ("waiting", "staging", "reboot", "monitoring", "updated", "backoff", "failure"):
        assert legend in texts, texts
    assert any(
        t.startswith("The agent failed on its way to StagedAndPerformedUpdate") for t in texts
    )
    assert "concurrency limit" in texts
    assert "fleet halted: node-02 failed nodeReady" in texts
    assert any(t.startswith(f"brupop status: 4 nodes in {NS}; limit 1") for t in texts), texts
    assert any(t.startswith("seconds since 2026-11-30 08:00:10 UTC") for t in texts), texts


def test_without_a_controller_the_timeline_is_drawn_without_the_limit(
    emulated: EmulatorServer, tmp_path: Path, capsys: pytest.CaptureFixture[str]
) -> None:
    _write_rollout(emulated)
    picture = tmp_path / "cluster.png"

    assert main(["--timeline", str(picture), "--timeout", "5"]) == 0

    err = capsys.readouterr().err
    assert err.startswith("brupop status: drawn without the concurrency limit: ")
    assert picture.read_bytes().startswith(b"\x89PNG")
    assert main(["--timeline", str(tmp_path / "cluster.svg"), "--timeout", "5"]) == 0
    assert any("; limit unknown," in text for text in _texts(tmp_path / "cluster.svg"))


@pytest.mark.parametrize("name", ["cluster.pdf", "a-file/cluster.svg", "."])
def test_a_path_that_cannot_take_the_picture_is_refused_before_the_cluster_is_asked(
    name: str, emulated: EmulatorServer, tmp_path: Path, capsys: pytest.CaptureFixture[str]
) -> None:
    (tmp_path / "a-file").write_text("not a directory\n")
    assert main(["--timeline", str(tmp_path / name)]) == 2

    err = capsys.readouterr().err
    assert err.startswith("brupop status: --timeline: ") and err.count("\n") == 1
    assert emulated.emulator.requests == []


def test_without_matplotlib_it_says_how_to_get_it_and_exits_2(tmp_path: Path) -> None:
    probe = (
        "import sys\n"
        "sys.modules['matplotlib'] = None  # as if the package were not installed\n"
        "from brupop.cli.main import main\n"
        f"sys.exit(main(['status', '--timeline', {str(tmp_path / 'x.svg')!r}]))\n"
    )
    answer = subprocess.run(
        [sys.executable, "-c", probe], capture_output=True, text=True, timeout=60, check=False
    )

    assert answer.returncode == 2, answer.stderr
    assert "--timeline needs matplotlib" in answer.stderr
    assert "pip install 'brupop[simulate]'" in answer.stderr
    assert "Traceback" not in answer.stderr


def test_with_url_the_limit_comes_from_that_controller(
    emulated: EmulatorServer, tmp_path: Path, capsys: pytest.CaptureFixture[str]
) -> None:
    _write_rollout(emulated)  # no Service for the proxy: only --url can give the limit
    picture = tmp_path / "cluster.svg"

    with serve_controller(Fleet(1), limit=3, tick=False) as (url, _):
        assert main(["--url", url, "--timeline", str(picture)]) == 0

    assert capsys.readouterr().err == ""
    texts = _texts(picture)
    assert any(t.startswith(f"brupop status: 4 nodes in {NS}; limit 3") for t in texts), texts


def test_with_url_and_no_cluster_it_says_the_rows_need_the_kubernetes_api(
    tmp_path: Path, capsys: pytest.CaptureFixture[str]
) -> None:
    url = "http://127.0.0.1:9"
    argv = ["--url", url, "--timeline", str(tmp_path / "f.svg")]

    assert main([*argv, "--kubeconfig", str(tmp_path / "absent")]) == 2

    lines = capsys.readouterr().err.splitlines()
    assert len(lines) == 1, lines
    assert lines[0].startswith(
        f"brupop status: the kubeconfig {tmp_path / 'absent'} cannot be used"
    )
    assert lines[0].endswith(
        f"(--timeline reads the shadows and their Events through the Kubernetes API; --url {url} "
        "gives only the concurrency limit)"
    )


def test_a_namespace_without_shadows_is_one_line_naming_it_and_draws_nothing(
    emulated: EmulatorServer, tmp_path: Path, capsys: pytest.CaptureFixture[str]
) -> None:
    _write_rollout(emulated)  # in NS: the namespace asked for holds none of it
    picture = tmp_path / "cluster.svg"

    assert main(["--timeline", str(picture), "--namespace", "nope", "--timeout", "5"]) == 1

    captured = capsys.readouterr()
    assert captured.out == ""
    lines = captured.err.splitlines()
    assert len(lines) == 1, lines
    assert lines[0].startswith("brupop status: no BottlerocketShadow in namespace 'nope': ")
    assert not picture.exists()
