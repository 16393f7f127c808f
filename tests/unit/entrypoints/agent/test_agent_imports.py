"""`brupop agent` stays small: it never loads the cluster client, the web stack, urllib3 or rich."""

from __future__ import annotations

import json
import subprocess
import sys

HEAVY = (
    "kubernetes",
    "starlette",
    "uvicorn",
    "fastapi",
    "dependency_injector",
    "prometheus_client",
    "pydantic_settings",
    "rich",
    "urllib3",
)


def test_agent_entrypoint_and_its_adapters_load_none_of_the_heavy_modules() -> None:
    probe = (
        "import json, sys\n"
        "import brupop.entrypoints.agent.main as main\n"
        "import brupop.adapters.apiserver_client\n"
        f"print(json.dumps([m for m in {HEAVY!r} if sys.modules.get(m) is not None]))\n"
    )
    answer = subprocess.run(
        [sys.executable, "-c", probe], capture_output=True, text=True, timeout=60, check=True
    )

    assert json.loads(answer.stdout) == []
