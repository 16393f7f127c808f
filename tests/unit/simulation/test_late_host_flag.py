"""`--late-host NODE[=SECONDS]`: which hosts answer their first call late, and by how much (15 s
unless given), handed to each late node's host emulator; a bad node or duration is refused
naming the flag."""

from __future__ import annotations

from pathlib import Path

import pytest

from brupop.cli.fleet_description.nodes import SimulatedNode
from brupop.simulation.flags.options import OptionError, parse_options
from brupop.simulation.fleet.agent_env import agent_env
from brupop.simulation.fleet.certificates import TlsFiles

DELAY = "BRUPOP_SIM_FIRST_ANSWER_DELAY_SECONDS"


def test_a_late_host_answers_15_s_late_unless_told_otherwise() -> None:
    options = parse_options(["--nodes", "3", "--late-host", "node-02", "--late-host", "node-03=4"])

    assert options.late_hosts == (("node-02", 15.0), ("node-03", 4.0))


@pytest.mark.parametrize(
    ("flag", "refusal"),
    [
        ("node-09", "--late-host: no node 'node-09'"),
        ("node-02=-1", "--late-host: -1 must be > 0"),
        ("node-02=nan", "--late-host: 'nan' is not a finite number"),
        ("node-02=601", "--late-host: 601 is more than the 600 s"),
    ],
)
def test_a_bad_late_host_is_refused_naming_the_flag(flag: str, refusal: str) -> None:
    with pytest.raises(OptionError, match=refusal):
        parse_options(["--nodes", "3", "--late-host", flag])


def test_only_the_late_nodes_host_is_told_its_delay(tmp_path: Path) -> None:
    options = parse_options(["--nodes", "2", "--late-host", "node-02=4.5"])
    tls = TlsFiles(*(tmp_path / name for name in ("ca", "cert", "key")))

    def env_of(name: str) -> dict[str, str]:
        node = SimulatedNode(name, f"agent-{name}", tmp_path / "token", tmp_path / name)
        return agent_env(
            node, options, apiserver_url="https://127.0.0.1:1", tls=tls,
            apiclient=tmp_path / "apiclient", namespace="brupop", base={},
        )  # fmt: skip

    assert env_of("node-02")[DELAY] == "4.5"
    assert DELAY not in env_of("node-01")
