"""`brupop agent` stays small by what it imports (never the cluster client, the web stack, urllib3,
structlog or rich), not by hiding modules from the interpreter."""

from __future__ import annotations

import json
import subprocess
import sys

# structlog is on the list because it imports `rich` whenever rich is installed.
HEAVY = (
    "kubernetes",
    "starlette",
    "uvicorn",
    "fastapi",
    "dependency_injector",
    "prometheus_client",
    "pydantic_settings",
    "rich",
    "matplotlib",
    "structlog",
    "urllib3",
    # Each costs the agent's start tens of milliseconds of CPU (docs/bench.md, agent start):
    # pydantic about 50, the e-mail parser that http.client reads headers with about 20.
    "pydantic",
    "pydantic_core",
    "email",
    # Small, but each costs the agent 0.4 to 0.5 MiB (docs/bench.md, section 1).
    "tenacity",
    "semver",
    "logging",
    # Needed on an error path only (a mistyped command, a traceback to log): each costs every
    # start 2 to 3 ms of CPU, seconds under `cpu: 10m`.
    "difflib",
    "traceback",
    # Frozen dataclasses compile their methods at import, about 1.2 ms of CPU per class, and
    # `dataclasses` loads `inspect` (about 9 ms): the agent's values are `value_object`s.
    "dataclasses",
    "inspect",
    # About 2.5 ms (with fnmatch and ntpath): the agent's paths are strings.
    "pathlib",
    # About 5 ms with `ipaddress`: the agent splits its base URL itself (base_url).
    "urllib",
    "ipaddress",
    # About 3 ms: the agent's modules import it for the type checker only (TYPE_CHECKING =
    # False), its protocols are defined there, and its small records are value objects.
    "typing",
)

# brupop's own modules that the agent's start has no use for: protocols read by the type
# checker alone (each module about 0.3 ms), and the CLI's parts for simulate and for typos.
UNUSED_AT_START = (
    "brupop.ports.clock",
    "brupop.ports.agent",
    "brupop.services.agent.event_log",
    "brupop.cli.extras",
    "brupop.cli.near_miss",
)

# A fresh interpreter goes the way `brupop agent` goes (the command line, then the agent's
# module), loads the apiserver client the agent builds its ports with, and lists every module.
PROBE = """\
import json, sys
from brupop.cli.main import main
assert main(["agent", "--help"]) == 0
import brupop.adapters.apiserver_client
print(json.dumps(sorted(sys.modules)))
"""


def _modules_loaded_by_the_agent() -> list[str]:
    answer = subprocess.run(
        [sys.executable, "-c", PROBE], capture_output=True, text=True, timeout=60, check=True
    )
    loaded: list[str] = json.loads(answer.stdout.splitlines()[-1])
    return loaded


def test_the_agent_entrypoint_loads_none_of_the_heavy_packages_not_even_as_a_placeholder() -> None:
    loaded = _modules_loaded_by_the_agent()

    heavy = [name for name in loaded if name.split(".")[0] in HEAVY]
    assert heavy == []  # a None entry left in sys.modules counts too: no import is poisoned


def test_the_agent_entrypoint_loads_no_protocol_module_and_no_cli_part_it_does_not_use() -> None:
    loaded = _modules_loaded_by_the_agent()

    unused = [
        name
        for name in loaded
        if any(name == part or name.startswith(part + ".") for part in UNUSED_AT_START)
    ]
    assert unused == []


def test_the_agent_entrypoint_does_load_its_own_modules() -> None:
    loaded = _modules_loaded_by_the_agent()

    assert "brupop.entrypoints.agent.composition" in loaded
    assert "brupop.adapters.apiclient.update_api" in loaded
