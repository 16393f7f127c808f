"""The agent image installs exactly the distributions the agent imports: none, since pydantic
left it (issue 32), so its venv holds brupop alone."""

from __future__ import annotations

import json
import subprocess
import sys

from scripts.release import rootfs, venv

from tests.deploy.rendering import REPO

# Imports the agent image's entrypoints in a fresh interpreter and names the distributions that
# what they loaded (beyond the interpreter's own start) comes from.
PROBE = """\
import importlib, importlib.metadata, json, sys, sysconfig
started = set(sys.modules)
for name in sys.argv[1:]:
    importlib.import_module(name)
site = (sysconfig.get_paths()["purelib"], sysconfig.get_paths()["platlib"])
owners = importlib.metadata.packages_distributions()
loaded = {name.split(".")[0] for name in set(sys.modules) - started}
third_party = {
    name for name in loaded
    if (getattr(sys.modules.get(name), "__file__", None) or "").startswith(site)
}
print(json.dumps(sorted({d.lower() for n in third_party for d in owners.get(n, [n])})))
"""


def test_the_agent_image_installs_only_the_distributions_the_agent_imports() -> None:
    answer = subprocess.run(
        [sys.executable, "-c", PROBE, *rootfs.ENTRYPOINTS["agent"]],
        capture_output=True,
        text=True,
        timeout=120,
        check=True,
    )
    imported = json.loads(answer.stdout.splitlines()[-1])

    assert imported == sorted(venv.AGENT_DISTRIBUTIONS) == []
    assert venv.requirements(REPO / "pyproject.toml", "agent") == []
