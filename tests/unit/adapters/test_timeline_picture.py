"""The timeline picture: one labelled row per node, a legend of the phases drawn, failures with
their reason, and the in-flight panel with the limit; SVG text stays searchable."""

from __future__ import annotations

import xml.etree.ElementTree as ElementTree
from pathlib import Path

from brupop.adapters.timeline_picture import draw_timeline
from brupop.domain.reporting.rollout_timeline import (
    FleetMark,
    Phase,
    Timeline,
    Transition,
    build_timeline,
)

SVG_TEXT = "{http://www.w3.org/2000/svg}text"


def _timeline() -> Timeline:
    transitions = [
        Transition("node-01", 1.0, Phase.STAGING),
        Transition("node-01", 2.0, Phase.DRAIN),
        Transition("node-01", 3.0, Phase.REBOOT),
        Transition("node-01", 4.0, Phase.MONITORING),
        Transition("node-01", 5.0, Phase.UPDATED),
        Transition("node-02", 5.0, Phase.STAGING),
        Transition("node-02", 6.0, Phase.BACKOFF, failure="agent failed in staging"),
    ]
    halt = [FleetMark(6.1, "fleet halted: node-02 failed nodeReady")]
    names = ["node-01", "node-02", "node-03"]
    return build_timeline(names, transitions, end=8.0, limit=1, fleet_marks=halt)


def _texts(path: Path) -> list[str]:
    tree = ElementTree.parse(path)
    return ["".join(element.itertext()) for element in tree.iter(SVG_TEXT)]


def test_the_svg_has_a_labelled_row_per_node_a_legend_and_the_failure_reason(
    tmp_path: Path,
) -> None:
    path = tmp_path / "run.svg"
    draw_timeline(_timeline(), path, "a sample run", x_label="seconds since the start")

    texts = _texts(path)
    for name in ("node-01", "node-02", "node-03"):
        assert name in texts
    for legend in ("waiting", "staging", "drain", "reboot", "monitoring", "backoff", "updated"):
        assert legend in texts
    assert "failure" in texts and "agent failed in staging" in texts
    assert "nodes in flight" in texts and "concurrency limit" in texts
    assert "a sample run" in texts and "seconds since the start" in texts
    assert "fleet halted: node-02 failed nodeReady" in texts
    assert "health gate" not in texts  # a phase no node went through stays out of the legend


def test_a_png_is_written_when_the_name_ends_in_png(tmp_path: Path) -> None:
    path = tmp_path / "run.PNG"
    draw_timeline(_timeline(), path, "a sample run")

    assert path.read_bytes().startswith(b"\x89PNG\r\n\x1a\n")


def test_without_a_limit_no_limit_line_is_drawn(tmp_path: Path) -> None:
    path = tmp_path / "run.svg"
    unlimited = build_timeline(["node-01"], [], end=2.0, limit=None)
    draw_timeline(unlimited, path, "no limit")

    assert "concurrency limit" not in _texts(path)
