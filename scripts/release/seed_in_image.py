"""The seed scenario inside an image root (run there by the image's own Python, under qemu for
a foreign architecture): the emulated host gets an update ready, the agent asks it to reboot,
the reboot kills `apiclient` and the agent with SIGTERM, and the agent must exit 0 with one
INFO line. argv: the launcher that runs the image's Python (empty, or the qemu binary).
Prints one JSON line: the agent's exit code and its log lines."""

from __future__ import annotations

import json
import os
import subprocess
import sys
from pathlib import Path

from tests.support import agent_emulated_host
from tests.support.agent_emulated_host import EmulatedHost

CHECKS = Path(__file__).resolve().parent
APICLIENT = CHECKS / "apiclient"
NODE = "ip-10-0-0-1.us-west-2.compute.internal"


def main() -> int:
    launcher = sys.argv[1:]
    agent_emulated_host.EMULATOR = str(APICLIENT)  # the image's emulator, through the launcher
    host = EmulatedHost(Path("/tmp/host"))
    host.directory.mkdir()
    host.make_ready()
    env = {
        "PATH": "/opt/brupop/bin:/usr/bin",
        "PYTHONPATH": str(CHECKS),
        "MY_NODE_NAME": NODE,
        "BRUPOP_NAMESPACE": "brupop-bottlerocket-aws",
        "APICLIENT_PATH": str(APICLIENT),
        "LOGGING_FORMATTER": "json",
        "TERMINATION_LOG": "/tmp/termination-log",
        "APICLIENT_RATE_PERIOD_SECONDS": "0",
        "HOST_POLL_INTERVAL_SECONDS": "0.05",
        "AGENT_SCENARIO_SPEC": "RebootedIntoUpdate:1.1.0",
        "AGENT_SCENARIO_STATUS": "StagedAndPerformedUpdate:1.0.0:1.1.0",
        **host.env(),
    }
    agent = subprocess.run(
        [*launcher, "/opt/brupop/bin/python", "-m", "tests.support.agent_scenario"],
        env=env, cwd="/", capture_output=True, text=True, timeout=240, check=False,
    )  # fmt: skip
    lines = [json.loads(line) for line in agent.stderr.splitlines() if line.startswith("{")]
    print(json.dumps({"code": agent.returncode, "lines": lines, "stderr": agent.stderr,
                      "version": host.running_version()}))  # fmt: skip
    return 0


if __name__ == "__main__":
    os.umask(0o022)
    sys.exit(main())
