"""`kubectl brupop ...`: kubectl runs an executable named `kubectl-brupop` found on PATH (krew's
plugin naming) with the words after `brupop`; it is the `brupop` command under kubectl's name."""

from __future__ import annotations

import subprocess
import sys
import tomllib
from pathlib import Path

ROOT = Path(__file__).resolve().parents[3]
PLUGIN = Path(sys.executable).parent / "kubectl-brupop"


def _plugin(*words: str) -> subprocess.CompletedProcess[str]:
    """Run the plugin as kubectl does: the executable, then the words after `brupop`."""
    return subprocess.run(
        [str(PLUGIN), *words], capture_output=True, text=True, timeout=60, check=False
    )


def test_the_package_installs_a_kubectl_brupop_executable() -> None:
    scripts = tomllib.loads((ROOT / "pyproject.toml").read_text())["project"]["scripts"]

    assert scripts["kubectl-brupop"] == "brupop.cli.main:kubectl_plugin"
    assert PLUGIN.is_file(), "scripts/bootstrap installs the console scripts into the venv"


def test_the_plugin_introduces_itself_under_kubectls_name() -> None:
    done = _plugin("--help")

    assert done.returncode == 0
    assert done.stdout.splitlines()[0].startswith("usage: kubectl brupop <command> [options]")


def test_the_plugin_runs_the_same_commands_as_brupop() -> None:
    as_plugin = _plugin("crd", "--kind", "BottlerocketShadow")
    as_brupop = subprocess.run(
        [sys.executable, "-m", "brupop", "crd", "--kind", "BottlerocketShadow"],
        capture_output=True, text=True, timeout=60, check=False,
    )  # fmt: skip

    assert as_plugin.returncode == as_brupop.returncode == 0, as_plugin.stderr
    assert as_plugin.stdout == as_brupop.stdout
    assert "kind: CustomResourceDefinition" in as_plugin.stdout


def test_a_mistyped_command_names_the_plugin_and_suggests() -> None:
    done = _plugin("stauts")

    assert done.returncode == 2
    assert done.stderr.splitlines() == [
        "kubectl brupop: unknown command 'stauts'; did you mean 'status'?",
        "see `kubectl brupop --help`",
    ]


def test_usage_cut_short_by_a_pipe_is_not_a_traceback() -> None:
    done = subprocess.run(
        f"'{PLUGIN}' --help | head -1", shell=True, capture_output=True, text=True, timeout=60,
        check=False,
    )  # fmt: skip

    assert done.stdout.startswith("usage: kubectl brupop <command> [options]")
    assert done.stdout.count("\n") == 1
    assert "Traceback" not in done.stderr
