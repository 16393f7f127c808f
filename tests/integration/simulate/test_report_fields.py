"""Every field of `brupop simulate --report` is documented in docs/simulate.md with its unit,
and the report names the phases as the summary's columns do."""

from __future__ import annotations

import io
import re
from dataclasses import fields
from pathlib import Path

from rich.console import Console

from brupop.simulation.outcome.display import print_summary
from brupop.simulation.outcome.report import (
    PHASES,
    NodeOutcome,
    RunFacts,
    SimulationReport,
    judge,
)

PAGE = Path(__file__).resolve().parents[3] / "docs" / "simulate.md"


def _report_section() -> str:
    text = PAGE.read_text(encoding="utf-8")
    start = text.index("## Report (`--report PATH`)")
    return text[start : text.index("\n## ", start + 1)]


def _documented() -> set[str]:
    """The field names in the first column of the section's tables."""
    names: set[str] = set()
    for line in _report_section().splitlines():
        if line.startswith("| `"):
            names.update(re.findall(r"`([a-z_]+)`", line.split("|")[1]))
    return names


def test_every_field_of_the_report_and_of_each_node_is_documented() -> None:
    documented = _documented()

    missing = [f.name for f in (*fields(SimulationReport), *fields(NodeOutcome))]
    assert [name for name in missing if name not in documented] == []


def test_the_documented_fields_exist() -> None:
    real = {f.name for f in (*fields(SimulationReport), *fields(NodeOutcome))}

    assert sorted(_documented() - real) == []


def test_the_reports_phase_names_are_the_summarys_columns_and_are_documented() -> None:
    node = NodeOutcome(
        name="node-01", initial_version="1.19.0", final_version="1.20.0", final_state="Idle",
        unschedulable=False, reboots=1, agent_exit_codes=[0], agent_peak_rss_kib=1,
        phase_seconds={"stage": 1.25, "reboot": 2.5, "monitor": 3.75, "finish": 0.5},
    )  # fmt: skip
    facts = RunFacts(
        duration_seconds=9.0, max_concurrent_allowed=1, max_concurrent_observed=1, tracebacks=0,
        nodes=[node], from_version="1.19.0", to_version="1.20.0",
    )  # fmt: skip
    out = io.StringIO()
    print_summary(Console(file=out, width=160, no_color=True), judge(facts))

    header = next(line for line in out.getvalue().splitlines() if line.strip().startswith("node"))
    assert header.split()[-4:] == list(PHASES.values()) == ["stage", "reboot", "monitor", "finish"]
    row = next(line for line in out.getvalue().splitlines() if line.strip().startswith("node-01"))
    assert row.split()[-4:] == ["1.2", "2.5", "3.8", "0.5"]
    section = _report_section()
    assert all(f"`{phase}`" in section for phase in PHASES.values())
