"""bench/rollout_efficiency.py reports no figure from a rollout whose verdict was not OK."""

from __future__ import annotations

import argparse
import importlib.util
import json
import sys
from collections.abc import Iterator
from pathlib import Path
from types import ModuleType
from typing import Any

import pytest

BENCH = Path(__file__).resolve().parents[3] / "bench"
FIGURES = ("rollout_wall_seconds", "wall_over_ideal", "ideal_seconds", "per_node_seconds_median")

# A stand-in for `brupop simulate`: writes the given report where --report says, exits as told.
FAKE_BRUPOP = """#!{python}
import json, sys
args = sys.argv[1:]
report = json.loads({report!r})
if report:
    with open(args[args.index("--report") + 1], "w") as out:
        json.dump(report, out)
print("brupop simulate (stand-in)")
sys.exit({code})
"""


@pytest.fixture
def bench() -> Iterator[ModuleType]:
    sys.path.insert(0, str(BENCH))  # the script imports its sibling `rig`
    try:
        spec = importlib.util.spec_from_file_location(
            "rollout_efficiency", BENCH / "rollout_efficiency.py"
        )
        assert spec is not None and spec.loader is not None
        module = importlib.util.module_from_spec(spec)
        sys.modules[spec.name] = module  # its dataclasses look their module up there
        spec.loader.exec_module(module)
        yield module
    finally:
        sys.modules.pop("rollout_efficiency", None)
        sys.path.remove(str(BENCH))


def _run(
    bench: ModuleType,
    tmp_path: Path,
    monkeypatch: pytest.MonkeyPatch,
    report: dict[str, Any],
    code: int,
) -> dict[str, Any]:
    fake = tmp_path / "bin" / "brupop"
    fake.parent.mkdir()
    fake.write_text(FAKE_BRUPOP.format(python=sys.executable, report=json.dumps(report), code=code))
    fake.chmod(0o755)
    monkeypatch.setattr(bench, "VENV_BIN", fake.parent)
    args = argparse.Namespace(nodes=2, limit=1, host_step=1.0, host_poll_interval=0.5, timeout=60.0)
    (tmp_path / "work").mkdir()
    result: dict[str, Any] = bench.run_fleet(args, tmp_path / "work", "run", ())
    return result


def test_a_failed_rollout_gives_its_verdict_and_no_figure(
    bench: ModuleType, tmp_path: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    verdict = "FAILED (2/2 nodes updated): node-01 agent exited with -9"
    exits = [{"code": -9, "cause": "shutdown-killed"}, {"code": 0, "cause": "own"}]
    report = {
        "ok": False,
        "verdict": verdict,
        "nodes": [{"name": "node-01", "agent_exits": exits}],
        "max_concurrent_observed": 1,
    }

    result = _run(bench, tmp_path, monkeypatch, report, code=1)

    assert result == {
        "ok": False,
        "simulate_exit_code": 1,
        "verdict": verdict,
        "agent_exits_by_cause": {"own 0": 1, "shutdown-killed -9": 1},
    }
    assert not set(FIGURES) & set(result)


def test_a_simulation_that_wrote_no_report_gives_no_figure_and_no_traceback(
    bench: ModuleType, tmp_path: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    result = _run(bench, tmp_path, monkeypatch, {}, code=3)

    assert result == {
        "ok": False,
        "simulate_exit_code": 3,
        "verdict": "no report (brupop simulate exited 3)",
    }


def test_only_an_ok_report_with_exit_0_is_measured(bench: ModuleType) -> None:
    assert bench.why_not_measured({"ok": True, "verdict": "OK: 2/2"}, 0) is None
    assert bench.why_not_measured({"ok": True, "verdict": "OK: 2/2"}, 1) == "OK: 2/2"
    assert bench.why_not_measured({"ok": False, "verdict": "FAILED (1/2)"}, 0) == "FAILED (1/2)"
