"""`brupop simulate`'s packages are an extra the image leaves out: without them the command
says how to get them (exit 2, no traceback), and nothing else in brupop imports them, but for
the timeline picture, which imports matplotlib only when it draws."""

from __future__ import annotations

import ast
import re
import subprocess
import sys
import tomllib
from pathlib import Path

import pytest

from brupop.cli.extras import SIMULATE

REPO = Path(__file__).resolve().parents[3]
PACKAGE = REPO / "src" / "brupop"


def _run_without(module: str, argv: list[str]) -> subprocess.CompletedProcess[str]:
    """Run `brupop ARGV` in a fresh interpreter in which MODULE cannot be imported."""
    probe = (
        "import sys\n"
        f"sys.modules[{module!r}] = None  # as if the package were not installed\n"
        "from brupop.cli.main import main\n"
        f"sys.exit(main({argv!r}))\n"
    )
    return subprocess.run(
        [sys.executable, "-c", probe], capture_output=True, text=True, timeout=60, check=False
    )


@pytest.mark.parametrize("module", SIMULATE.modules)
def test_simulate_without_its_extra_exits_2_and_says_how_to_install_it(module: str) -> None:
    answer = _run_without(module, ["simulate", "--nodes", "1"])

    assert answer.returncode == 2, answer.stderr
    assert module in answer.stderr
    assert "pip install 'brupop[simulate]'" in answer.stderr
    assert "Traceback" not in answer.stderr
    assert answer.stdout == ""


def test_the_three_processes_load_without_the_simulate_extra() -> None:
    probe = (
        "import sys\n"
        f"sys.modules.update(dict.fromkeys({SIMULATE.modules!r}))\n"
        "import brupop.entrypoints.agent.main\n"
        "import brupop.entrypoints.apiserver.main\n"
        "import brupop.entrypoints.controller.main\n"
        "import brupop.cli.status.main\n"
        "import brupop.adapters.timeline_picture\n"
    )
    answer = subprocess.run(
        [sys.executable, "-c", probe], capture_output=True, text=True, timeout=60, check=False
    )

    assert answer.returncode == 0, answer.stderr


def _requirement_names(requirements: list[str]) -> set[str]:
    return {re.split(r"[<>=!~\[; ]", requirement, maxsplit=1)[0] for requirement in requirements}


def test_the_simulate_extra_holds_its_packages_and_the_main_dependencies_do_not() -> None:
    project = tomllib.loads((REPO / "pyproject.toml").read_text(encoding="utf-8"))["project"]

    assert _requirement_names(project["optional-dependencies"]["simulate"]) == set(SIMULATE.modules)
    assert not _requirement_names(project["dependencies"]) & set(SIMULATE.modules)


def _top_level_imports(path: Path) -> set[str]:
    found: set[str] = set()
    for node in ast.walk(ast.parse(path.read_text(encoding="utf-8"))):
        if isinstance(node, ast.Import):
            found |= {alias.name.split(".")[0] for alias in node.names}
        elif isinstance(node, ast.ImportFrom) and node.level == 0 and node.module:
            found.add(node.module.split(".")[0])
    return found


# Imports matplotlib inside the function that draws (`brupop status --timeline` shares it).
LAZY_IMPORTERS = {"adapters/timeline_picture.py"}


def test_only_the_simulator_imports_the_simulate_extras_packages() -> None:
    simulator = PACKAGE / "simulation"
    importers = {
        str(path.relative_to(PACKAGE))
        for path in PACKAGE.rglob("*.py")
        if simulator not in path.parents and _top_level_imports(path) & set(SIMULATE.modules)
    }

    assert importers == LAZY_IMPORTERS
