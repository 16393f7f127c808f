"""The rollout timeline as a picture (SVG or PNG), drawn with matplotlib's Agg canvas.

matplotlib comes with the `simulate` extra, not with the image: it is imported only when a
picture is drawn, so a command can load (and check the path before a run starts) without it.
Text stays text in the SVG, so node names can be searched and read by tools.
"""

from __future__ import annotations

from pathlib import Path
from typing import TYPE_CHECKING

from brupop.adapters.system.writable_paths import PathUnwritable, check_file_path
from brupop.domain.reporting.rollout_timeline import Phase, Timeline

if TYPE_CHECKING:
    from matplotlib.axes import Axes

FORMATS = {".svg": "svg", ".png": "png"}
_REASON_CHARS = 60
_ROW_INCHES = 0.34
_ROOMY_ROWS = 60
_COLOURS = {
    Phase.WAITING: "#e4e4e4",
    Phase.STAGING: "#4c78a8",
    Phase.STAGING_AHEAD: "#9ecae9",
    Phase.HOOKS_BEFORE: "#9467bd",
    Phase.DRAIN: "#f58518",
    Phase.REBOOT: "#d62728",
    Phase.HOOKS_AFTER: "#c5b0d5",
    Phase.MONITORING: "#54a24b",
    Phase.GATE: "#b5bd2b",
    Phase.BACKOFF: "#f4b6c2",
    Phase.HALTED: "#bdbdbd",
    Phase.UPDATED: "#c7e9c0",
    Phase.UPDATING: "#72b7b2",
}
# A halt must not look like an ordinary wait, nor a download ahead like one in the node's turn.
_HATCHES = {Phase.HALTED: "////", Phase.STAGING_AHEAD: ".."}


class PicturePathError(ValueError):
    """The picture cannot be written there; the message says why."""


def check_picture_path(raw: str) -> Path:
    """The path, if a picture can be written there (missing folders are made when it is
    drawn); else PicturePathError naming the problem."""
    path = Path(raw).expanduser()
    if path.suffix.lower() not in FORMATS:
        raise PicturePathError(f"{raw}: the picture's name must end in .svg or .png")
    try:
        return check_file_path(raw)
    except PathUnwritable as error:
        raise PicturePathError(str(error)) from None


def draw_timeline(
    timeline: Timeline, path: Path, title: str, x_label: str = "seconds since the rollout began"
) -> None:
    """Write the Gantt chart and the in-flight panel below it to `path` (.svg or .png)."""
    from matplotlib import rc_context
    from matplotlib.figure import Figure

    rows = max(1, len(timeline.rows))
    per_row = _ROW_INCHES if rows <= _ROOMY_ROWS else _ROW_INCHES / 2  # a big fleet, packed
    figure = Figure(figsize=(12, 2.6 + per_row * rows), layout="constrained")
    gantt, flight = figure.subplots(
        2, 1, sharex=True, gridspec_kw={"height_ratios": [max(2.0, per_row * rows), 1.4]}
    )
    _draw_rows(gantt, timeline, fontsize=8 if rows <= _ROOMY_ROWS else 5)
    _draw_in_flight(flight, timeline, x_label)
    _draw_fleet_marks(gantt, flight, timeline)
    gantt.set_title(title, loc="left", fontsize=11)
    fmt = FORMATS[path.suffix.lower()]
    path.parent.mkdir(parents=True, exist_ok=True)
    metadata = {"Date": None} if fmt == "svg" else None
    with rc_context({"svg.fonttype": "none"}):  # text as <text>, not outlines
        figure.savefig(path, format=fmt, dpi=110, metadata=metadata)


def _draw_rows(axes: Axes, timeline: Timeline, *, fontsize: float) -> None:
    names = [row.node for row in timeline.rows]
    seen: set[Phase] = set()
    for index, row in enumerate(timeline.rows):
        for span in row.spans:
            label = str(span.phase) if span.phase not in seen else None
            seen.add(span.phase)
            axes.barh(
                index,
                span.end - span.start,
                left=span.start,
                height=0.7,
                color=_COLOURS[span.phase],
                hatch=_HATCHES.get(span.phase),
                edgecolor="white" if span.phase not in _HATCHES else "#757575",
                linewidth=0.5,
                label=label,
            )
        for mark in row.failures:
            axes.plot(mark.at, index, marker="X", markersize=10, color="black", linestyle="none")
            # Past the middle, the reason reads leftwards so it stays inside the chart.
            right_half = mark.at > timeline.end / 2
            axes.annotate(
                _short(mark.reason),
                (mark.at, index),
                xytext=(-8 if right_half else 8, -3),
                textcoords="offset points",
                horizontalalignment="right" if right_half else "left",
                fontsize=7,
                bbox={"boxstyle": "round,pad=0.15", "facecolor": "white", "alpha": 0.8, "lw": 0},
            )
    if any(row.failures for row in timeline.rows):
        axes.plot([], [], marker="X", color="black", linestyle="none", label="failure")
    axes.set_yticks(range(len(names)), labels=names, fontsize=fontsize)
    axes.set_ylim(len(names) - 0.5, -0.5)  # the first node on top
    axes.set_xlim(0, max(timeline.end, 1e-3))
    axes.grid(axis="x", color="#dddddd", linewidth=0.5)
    axes.set_axisbelow(True)
    _legend(axes, seen)
    if timeline.omitted_nodes:
        axes.set_xlabel(f"({timeline.omitted_nodes} more nodes not drawn)", fontsize=8)


def _legend(axes: Axes, seen: set[Phase]) -> None:
    handles, labels = axes.get_legend_handles_labels()
    order = [str(phase) for phase in Phase] + ["failure"]
    pairs = sorted(zip(labels, handles, strict=True), key=lambda pair: order.index(pair[0]))
    axes.legend(
        [handle for _, handle in pairs],
        [label for label, _ in pairs],
        loc="upper left",
        bbox_to_anchor=(1.0, 1.0),
        fontsize=8,
        frameon=False,
    )


def _draw_in_flight(axes: Axes, timeline: Timeline, x_label: str) -> None:
    from matplotlib.ticker import MaxNLocator

    times = [at for at, _ in timeline.in_flight] + [timeline.end]
    counts = [count for _, count in timeline.in_flight]
    counts.append(counts[-1] if counts else 0)
    axes.fill_between(times, counts, step="post", color="#4c78a8", alpha=0.35, linewidth=0)
    axes.step(times, counts, where="post", color="#4c78a8", linewidth=1.5, label="nodes in flight")
    top = max(timeline.most_in_flight, 1)
    if timeline.limit is not None:
        axes.axhline(
            timeline.limit,
            color="#d62728",
            linestyle="--",
            linewidth=1.2,
            label="concurrency limit",
        )
        top = max(top, timeline.limit)
    axes.set_ylim(0, top + 0.5)
    axes.yaxis.set_major_locator(MaxNLocator(integer=True))
    axes.set_ylabel("nodes in flight", fontsize=8)
    axes.set_xlabel(x_label)
    axes.grid(axis="x", color="#dddddd", linewidth=0.5)
    axes.legend(loc="upper left", bbox_to_anchor=(1.0, 1.0), fontsize=8, frameon=False)


def _draw_fleet_marks(gantt: Axes, flight: Axes, timeline: Timeline) -> None:
    """A fleet-wide moment (a halt) is a vertical line through both panels, named on top."""
    for mark in timeline.fleet_marks:
        for axes in (gantt, flight):
            axes.axvline(mark.at, color="black", linestyle=":", linewidth=1.2)
        right_half = mark.at > timeline.end / 2
        flight.annotate(
            _short(mark.label),
            (mark.at, 1.0),
            xycoords=("data", "axes fraction"),
            xytext=(-4 if right_half else 4, -3),
            textcoords="offset points",
            fontsize=7,
            horizontalalignment="right" if right_half else "left",
            verticalalignment="top",
            bbox={"boxstyle": "round,pad=0.15", "facecolor": "white", "alpha": 0.8, "lw": 0},
        )


def _short(reason: str) -> str:
    text = " ".join(reason.split())
    return text if len(text) <= _REASON_CHARS else text[: _REASON_CHARS - 1] + "…"
