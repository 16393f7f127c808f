"""The commands that read a kubeconfig (`status`, `status --timeline`, `pause`, `resume`): a
kubeconfig they cannot use is one line naming the file, exit 2; an API server that does not
answer is one short line, without urllib3's description of the connection."""

from __future__ import annotations

import socket
from collections.abc import Callable
from pathlib import Path

import pytest

from brupop.cli.pausing import pause, resume
from brupop.cli.status import main as status
from tests.support.kubeconfig import use_kubeconfig

Command = Callable[[Path], int]

COMMANDS: dict[str, Command] = {
    "status": lambda _tmp: status.main(["--timeout", "5"]),
    "status --timeline": lambda tmp: status.main(["--timeline", str(tmp / "t.svg")]),
    "pause": lambda _tmp: pause.main(["--timeout", "5"]),
    "resume": lambda _tmp: resume.main(["--timeout", "5"]),
    "resume --node": lambda _tmp: resume.main(["--node", "node-a", "--timeout", "5"]),
}
BROKEN = {
    "not YAML": "garbage: [\n",
    "a YAML list": "[]\n",
    "a YAML number": "42\n",
    "binary": "\udcff\udcfe",
}


@pytest.fixture(params=sorted(COMMANDS))
def command(request: pytest.FixtureRequest) -> Command:
    return COMMANDS[request.param]


@pytest.mark.parametrize("content", BROKEN.values(), ids=BROKEN.keys())
def test_a_broken_kubeconfig_is_one_line_naming_it_and_exit_2(
    command: Command,
    content: str,
    tmp_path: Path,
    monkeypatch: pytest.MonkeyPatch,
    capsys: pytest.CaptureFixture[str],
) -> None:
    path = tmp_path / "bad.kc"
    path.write_bytes(content.encode("utf-8", "surrogateescape"))
    monkeypatch.setenv("KUBECONFIG", str(path))
    monkeypatch.delenv("KUBERNETES_SERVICE_HOST", raising=False)

    assert command(tmp_path) == 2

    captured = capsys.readouterr()
    assert captured.out == ""
    lines = captured.err.splitlines()
    assert len(lines) == 1, captured.err
    assert f"the kubeconfig {path} cannot be used" in lines[0]
    assert "Traceback" not in captured.err


def test_a_kubeconfig_that_is_not_yaml_says_where_it_breaks(
    tmp_path: Path, monkeypatch: pytest.MonkeyPatch, capsys: pytest.CaptureFixture[str]
) -> None:
    path = tmp_path / "bad.kc"
    path.write_text("garbage: [\n")
    monkeypatch.setenv("KUBECONFIG", str(path))
    monkeypatch.delenv("KUBERNETES_SERVICE_HOST", raising=False)

    assert status.main([]) == 2

    err = capsys.readouterr().err
    assert "it is not valid YAML" in err and "(line 2, column 1)" in err


def _refusing_url() -> str:
    """An address on loopback where nothing listens (the port was just free)."""
    with socket.socket() as probe:
        probe.bind(("127.0.0.1", 0))
        return f"https://127.0.0.1:{probe.getsockname()[1]}"


def test_a_dead_api_server_is_one_short_line_without_urllib3s_repr(
    command: Command,
    tmp_path: Path,
    monkeypatch: pytest.MonkeyPatch,
    capsys: pytest.CaptureFixture[str],
) -> None:
    url = _refusing_url()
    use_kubeconfig(monkeypatch, tmp_path / "kc", url)

    assert command(tmp_path) == 1

    lines = capsys.readouterr().err.splitlines()
    assert len(lines) == 1, lines
    assert "connection refused" in lines[0]
    assert "HTTPSConnection" not in lines[0] and "Errno" not in lines[0]
    assert len(lines[0]) <= 250, lines[0]
