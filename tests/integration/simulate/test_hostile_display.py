"""What `brupop simulate` prints from the cluster or a host (node names, versions, reasons, an
agent's last failure, the verdict that quotes them) reaches the terminal through `printable`:
no escape sequence retitles the window, writes the clipboard or overwrites a line, and no
bracket is read as rich markup (a stray closing tag would crash the view)."""

from __future__ import annotations

import io
import time

from rich.console import Console

from brupop.domain.states import UpdateState
from brupop.simulation.fleet.observer import NodeView
from brupop.simulation.fleet.supervisor import AgentView
from brupop.simulation.outcome.display import LiveView, PlainProgress, print_summary
from brupop.simulation.outcome.report import NodeOutcome, judge
from tests.support.simulation_outcome import node_outcome, run_facts

TITLE = "\x1b]0;pwned\x07"  # retitles the terminal window
CLIPBOARD = "\x1b]52;c;ZXZpbA==\x07"  # OSC 52: writes the clipboard
OVERWRITE = "\x1b[2K\x1b[1A\rall nodes healthy"  # erases the line above and writes over it
MARKUP = "[/] [bold red]"  # a closing tag nothing opened: rich raises MarkupError
HOSTILE = f"{TITLE}{CLIPBOARD}evil{OVERWRITE}{MARKUP}"


def _console() -> tuple[Console, io.StringIO]:
    out = io.StringIO()
    return Console(file=out, width=400, no_color=True, highlight=False), out


def _clean(text: str) -> bool:
    return not any(ord(char) < 32 and char != "\n" for char in text)


def _node(name: str, **changes: object) -> NodeOutcome:
    """Node `name`, not updated yet."""
    return node_outcome(name, **{"final_version": "1.19.0", "reboots": 0, **changes})


def test_the_summary_shows_a_hostile_node_reason_and_failure_without_their_escapes() -> None:
    node = _node(f"n-{HOSTILE}", reason=f"waiting: {HOSTILE}", last_failure=HOSTILE)
    facts = run_facts(
        node, duration_seconds=1.0, max_concurrent_allowed=1, max_concurrent_observed=1
    )
    console, out = _console()

    print_summary(console, judge(facts))

    printed = out.getvalue()
    assert _clean(printed), repr(printed)
    assert "evil" in printed and MARKUP in printed, "the readable text stays, brackets and all"
    assert "pwned" not in printed and "ZXZpbA" not in printed
    assert printed.splitlines()[-1].startswith("FAILED (0/1 nodes updated): n-evil")


def test_a_phase_line_shows_a_hostile_node_and_version_without_their_escapes() -> None:
    console, out = _console()
    progress = PlainProgress(console, "1.20.0", time.monotonic())
    before = NodeView(node=HOSTILE)
    after = NodeView(
        node=HOSTILE,
        spec_state=UpdateState.STAGED_AND_PERFORMED_UPDATE,
        status_state=UpdateState.IDLE,
        current_version=HOSTILE,
    )

    progress.node_changed(before, after)
    progress.note(f"note {HOSTILE}")

    printed = out.getvalue()
    assert _clean(printed), repr(printed)
    assert printed.count("evil") == 3 and MARKUP in printed


def test_the_live_view_shows_a_hostile_node_version_and_note_without_their_escapes() -> None:
    console, out = _console()
    views = {HOSTILE: NodeView(node=HOSTILE, current_version=HOSTILE)}
    agents: dict[str, AgentView] = {}
    view = LiveView(console, "1.20.0", lambda: views, lambda: agents, lambda: 0, "1")

    with view:
        view.note(f"note {HOSTILE}")

    printed = out.getvalue()
    assert _clean(printed), repr(printed)
    assert "evil" in printed and "note evil" in printed
