"""docs/troubleshooting.md lists every REASON code, every Event reason brupop records and every
exit code of its commands, each with what it means, what to check and a command: a code in the
code that the page lacks fails here."""

from __future__ import annotations

import ast
import re
from pathlib import Path
from types import ModuleType

import pytest

from brupop.cli import main as cli
from brupop.cli.doctor import main as doctor
from brupop.cli.pausing import command as pausing
from brupop.cli.plan import main as plan
from brupop.cli.policy import main as policy
from brupop.cli.status import main as status
from brupop.cli.status import timeline_command
from brupop.domain.reason import Reason
from brupop.entrypoints import invocation
from brupop.simulation import main as simulate

ROOT = Path(__file__).resolve().parents[2]
PAGE = (ROOT / "docs" / "troubleshooting.md").read_text(encoding="utf-8")
EVENT_REASON = re.compile(r"^[A-Z][a-z]+(?:[A-Z][a-z]+)+$")
# Each exit-code section of the page, and the modules whose EXIT_* constants it must list.
EXIT_SECTIONS: dict[str, tuple[ModuleType, ...]] = {
    "`brupop agent`, `brupop controller`, `brupop apiserver`": (invocation,),
    "`brupop simulate`": (simulate,),
    "`brupop status`": (status, timeline_command),
    "`brupop pause`, `brupop resume`": (pausing,),
    "`brupop plan`": (plan,),
    "`brupop crd`": (),
    "`brupop doctor`": (doctor,),
    "`brupop policy` lint": (policy,),
    "`brupop` itself": (cli,),
}


def _section(heading: str) -> str:
    start = PAGE.index(f"\n{heading}\n")
    level = heading.split()[0]
    rest = PAGE[start + len(heading) + 2 :]
    ends = [m.start() for m in re.finditer(rf"^#{{1,{len(level)}}} ", rest, re.M)]
    return rest[: ends[0]] if ends else rest


def _rows(section: str) -> dict[str, list[str]]:
    """Each table row's first cell (backticks stripped) and the cells after it."""
    rows = {}
    for line in section.splitlines():
        cells = [cell.strip() for cell in line.strip().strip("|").split("|")]
        if (
            line.startswith("| ")
            and not set(cells[0]) <= {"-"}
            and cells[0] not in ("code", "reason")
        ):
            rows[cells[0].strip("`")] = cells[1:]
    return rows


def recorded_event_reasons() -> set[str]:
    """The Event reasons in the source: the CamelCase strings of every module of the domain and
    the services (what the controller and apiserver run) that builds a ClusterEvent or names a
    hook phase's Event. (simulate's harness builds some from the Events it reads back.)"""
    reasons: set[str] = set()
    sources = [ROOT / "src" / "brupop" / layer for layer in ("domain", "services")]
    for path in (path for source in sources for path in source.rglob("*.py")):
        text = path.read_text(encoding="utf-8")
        if "ClusterEvent(" not in text and "def event_reason" not in text:
            continue
        texts = (
            node.value
            for node in ast.walk(ast.parse(text))
            if isinstance(node, ast.Constant) and isinstance(node.value, str)
        )
        reasons.update(text for text in texts if EVENT_REASON.match(text))
    return reasons


def test_every_reason_code_is_on_the_page_with_meaning_check_and_command() -> None:
    rows = _rows(_section("## REASON codes"))

    assert sorted(code.value for code in Reason if code.value not in rows) == []
    assert sorted(set(rows) - {code.value for code in Reason}) == [], "codes that do not exist"
    assert [code for code, cells in rows.items() if len(cells) != 3 or not all(cells)] == []


def test_every_event_reason_the_code_records_is_on_the_page() -> None:
    recorded = recorded_event_reasons()
    rows = _rows(_section("## Event reasons"))

    assert len(recorded) >= 17, recorded
    assert sorted(recorded - set(rows)) == []
    assert sorted(set(rows) - recorded) == [], "reasons nothing records"
    assert [reason for reason, cells in rows.items() if len(cells) != 4 or not all(cells)] == []


@pytest.mark.parametrize("heading", EXIT_SECTIONS)
def test_every_exit_code_of_each_command_is_on_the_page(heading: str) -> None:
    rows = _rows(_section(f"### {heading}"))
    codes = {
        value
        for module in EXIT_SECTIONS[heading]
        for name, value in vars(module).items()
        if name.startswith("EXIT_") and isinstance(value, int)
    }

    assert codes or not EXIT_SECTIONS[heading], heading
    assert sorted(code for code in codes if str(code) not in rows) == []
    for code, (meaning, check, command) in rows.items():
        assert meaning and check, f"{heading} {code}"
        assert command or code == "0", f"{heading} {code} names no command"


def test_every_command_has_its_exit_codes_on_the_page() -> None:
    headings = " ".join(EXIT_SECTIONS)

    assert [name for name in cli.command_names() if f"`brupop {name}`" not in headings] == []
    assert all(f"\n### {heading}\n" in PAGE for heading in EXIT_SECTIONS)
