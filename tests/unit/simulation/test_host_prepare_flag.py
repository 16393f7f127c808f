"""`--host-prepare SECONDS`: the emulated hosts' prepare (the image's download and write) takes
its own time, for rehearsing pre-staging; left at 0 it takes --host-step as before."""

from __future__ import annotations

from pathlib import Path

from brupop.cli.fleet_description.nodes import SimulatedNode
from brupop.simulation.flags.options import parse_options
from brupop.simulation.fleet.agent_env import agent_env
from brupop.simulation.fleet.certificates import TlsFiles

PREPARE = "BRUPOP_SIM_PREPARE_SECONDS"


def _env(tmp_path: Path, *flags: str) -> dict[str, str]:
    options = parse_options(["--nodes", "1", *flags])
    tls = TlsFiles(*(tmp_path / name for name in ("ca", "cert", "key")))
    node = SimulatedNode("node-01", "agent-node-01", tmp_path / "token", tmp_path / "node-01")
    return agent_env(
        node, options, apiserver_url="https://127.0.0.1:1", tls=tls,
        apiclient=tmp_path / "apiclient", namespace="brupop", base={},
    )  # fmt: skip


def test_host_prepare_sets_the_prepare_time_alone(tmp_path: Path) -> None:
    env = _env(tmp_path, "--host-step", "0.5", "--host-prepare", "60")

    assert env[PREPARE] == "60"
    assert env["BRUPOP_SIM_REFRESH_SECONDS"] == "0.5"
    assert env["BRUPOP_SIM_ACTIVATE_SECONDS"] == "0.5"


def test_without_host_prepare_prepare_takes_the_host_step(tmp_path: Path) -> None:
    assert _env(tmp_path, "--host-step", "0.5")[PREPARE] == "0.5"
