"""Every command that reads a cluster reaches it the same way: a kubeconfig it cannot use is
one line naming the file and the cause, exit 2; an API server that does not answer is one line
naming its URL, exit 1; the same words under `kubectl brupop`; `--kubeconfig` and `--context`
on every one of them."""

from __future__ import annotations

import json
import socket
from dataclasses import dataclass
from pathlib import Path

import pytest

from brupop.cli import main as cli
from tests.support.kubeconfig import write_kubeconfig

# Each command with arguments that would otherwise run it against the cluster.
COMMANDS: dict[str, list[str]] = {
    "status": ["status"],
    "pause": ["pause"],
    "resume": ["resume"],
    "plan": ["plan"],
    "doctor": ["doctor"],
    "policy lint": ["policy", "lint"],
    "simulate": ["simulate", "--nodes", "1"],
}
PROGRAMS = ["brupop", "kubectl brupop"]


@dataclass(frozen=True)
class Row:
    """One input of the table: how to write it, the exit code and what the line says."""

    content: str | None  # None: no file at all
    code: int
    says: str


ROWS: dict[str, Row] = {
    "no such file": Row(None, 2, "cannot be used: there is no such file"),
    "a Config with no contexts": Row(
        "apiVersion: v1\nkind: Config\nclusters: []\nusers: []\ncontexts: []\n",
        2,
        "cannot be used: it sets no current-context",
    ),
    "clusters: 5": Row("clusters: 5\n", 2, "cannot be used: it is YAML, but not a kubeconfig"),
    "garbage: [": Row("garbage: [\n", 2, "cannot be used: it is not valid YAML"),
    "an alias bomb": Row(
        "\n".join(
            [
                "x0: &x0 [a]",
                *(f"x{n}: &x{n} [{', '.join([f'*x{n - 1}'] * 9)}]" for n in range(1, 8)),
            ]
        )
        + "\ncontexts: *x7\n",
        2,
        "cannot be used: more than 1048576 values once its aliases are expanded",
    ),
    "nested 5,000 deep": Row(
        "clusters: " + "[" * 5000 + "]" * 5000 + "\n",
        2,
        "cannot be used: nested more than 64 levels (line 1)",
    ),
}


def closed_port_url() -> str:
    """An https URL on loopback where nothing listens (the port was free a moment ago)."""
    with socket.socket() as probe:
        probe.bind(("127.0.0.1", 0))
        return f"https://127.0.0.1:{probe.getsockname()[1]}"


def run(
    command: str,
    program: str,
    kubeconfig: Path,
    extra: list[str],
    monkeypatch: pytest.MonkeyPatch,
    capsys: pytest.CaptureFixture[str],
) -> tuple[int, list[str]]:
    """Run the command as `program` on `kubeconfig` (simulate takes it as a flag, the others
    from $KUBECONFIG), outside a pod; its exit code and stderr lines, stdout left empty."""
    monkeypatch.delenv("KUBERNETES_SERVICE_HOST", raising=False)
    argv = [*COMMANDS[command], *extra]
    if command == "simulate":
        argv += ["--kubeconfig", str(kubeconfig)]
    else:
        monkeypatch.setenv("KUBECONFIG", str(kubeconfig))
    code = cli.main(argv, prog=program)
    captured = capsys.readouterr()
    assert captured.out == ""
    return code, captured.err.splitlines()


@pytest.mark.parametrize("program", PROGRAMS)
@pytest.mark.parametrize("row", ROWS, ids=str)
@pytest.mark.parametrize("command", COMMANDS)
def test_a_kubeconfig_that_cannot_be_used_is_one_line_naming_it_with_exit_2(
    command: str,
    row: str,
    program: str,
    tmp_path: Path,
    monkeypatch: pytest.MonkeyPatch,
    capsys: pytest.CaptureFixture[str],
) -> None:
    expected = ROWS[row]
    path = tmp_path / "kubeconfig"
    if expected.content is not None:
        path.write_text(expected.content)

    code, lines = run(command, program, path, [], monkeypatch, capsys)

    assert (code, len(lines)) == (expected.code, 1), lines
    assert lines[0].startswith(f"{program} {command}: the kubeconfig {path} {expected.says}")


@pytest.mark.parametrize("program", PROGRAMS)
@pytest.mark.parametrize("command", COMMANDS)
def test_an_api_server_that_does_not_answer_is_one_line_naming_its_url_with_exit_1(
    command: str,
    program: str,
    tmp_path: Path,
    monkeypatch: pytest.MonkeyPatch,
    capsys: pytest.CaptureFixture[str],
) -> None:
    url = closed_port_url()
    path = write_kubeconfig(tmp_path / "kubeconfig", url)

    code, lines = run(command, program, path, [], monkeypatch, capsys)

    assert (code, len(lines)) == (1, 1), lines
    assert lines[0] == (
        f"{program} {command}: the Kubernetes API at {url} does not answer (connection "
        "refused): check the kubeconfig's context (kubectl cluster-info)"
    )


@pytest.mark.parametrize("command", COMMANDS)
def test_every_command_takes_kubeconfig_and_context_flags(
    command: str,
    tmp_path: Path,
    monkeypatch: pytest.MonkeyPatch,
    capsys: pytest.CaptureFixture[str],
) -> None:
    current, other = closed_port_url(), closed_port_url()
    config = json.loads(write_kubeconfig(tmp_path / "kubeconfig", current).read_text())
    config["clusters"].append({"name": "other", "cluster": {"server": other}})
    config["contexts"].append({"name": "other", "context": {"cluster": "other", "user": "admin"}})
    path = tmp_path / "two-contexts"
    path.write_text(json.dumps(config))
    monkeypatch.setenv("KUBECONFIG", str(tmp_path / "not-this-one"))
    monkeypatch.delenv("KUBERNETES_SERVICE_HOST", raising=False)

    code = cli.main([*COMMANDS[command], "--kubeconfig", str(path), "--context", "other"])

    assert code == 1
    assert f"the Kubernetes API at {other} does not answer" in capsys.readouterr().err


@pytest.mark.parametrize("command", COMMANDS)
def test_a_context_the_kubeconfig_lacks_is_named_with_exit_2(
    command: str,
    tmp_path: Path,
    monkeypatch: pytest.MonkeyPatch,
    capsys: pytest.CaptureFixture[str],
) -> None:
    path = write_kubeconfig(tmp_path / "kubeconfig", closed_port_url())
    monkeypatch.delenv("KUBERNETES_SERVICE_HOST", raising=False)

    code = cli.main([*COMMANDS[command], "--kubeconfig", str(path), "--context", "prod"])

    assert code == 2
    assert f"the kubeconfig {path} cannot be used: it has no context named 'prod'" in (
        capsys.readouterr().err
    )
