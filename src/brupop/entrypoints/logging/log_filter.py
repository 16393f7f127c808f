"""TRACING_FILTER_DIRECTIVE in the original's syntax (tracing-subscriber's EnvFilter), mapped
onto brupop's components.

Accepted, comma-separated, as the original accepts them:
* a level: `trace`, `debug`, `info`, `warn`, `error`, `off` (any case) or `0`-`5`;
* `target=level`, or a bare `target` (every level of that target, that is `trace`);
* a span filter `target[span{field=value}]=level`: the span part is ignored (brupop has no
  spans), the target counts.

Targets are mapped onto brupop's processes: the original's crates `agent`, `apiserver` and
`controller` (with any `::path` below them) set that process's level; `brupop` (this package,
`brupop.…` too) and `models` (the original's shared crate) set every process's level. A
process's own target wins over a shared one, which wins over a bare level; among equals, the
last one wins. Other targets (`kube`, `hyper`, ...) have nothing to act on here: they are
accepted and reported once at start. With no directive for a process, its level is `info`.
`trace` logs as `debug` (brupop has no finer level); `off` logs nothing.

A part outside this syntax (`agent=loud`) stops the process at start; the original skipped it
silently.
"""

from __future__ import annotations

import re

from brupop.domain.value_objects import value_object

# The standard library's level numbers, written out: the agent logs without `logging` and
# would load it (0.4 MiB) only for these.
DEBUG, INFO, WARNING, ERROR, CRITICAL = 10, 20, 30, 40, 50
OFF = CRITICAL + 10
COMPONENTS = ("agent", "apiserver", "controller")
SHARED_TARGETS = ("brupop", "models")
_LEVELS = {
    "off": OFF,
    "error": ERROR,
    "warn": WARNING,
    "warning": WARNING,
    "info": INFO,
    "debug": DEBUG,
    "trace": DEBUG,
    "0": OFF,
    "1": ERROR,
    "2": WARNING,
    "3": INFO,
    "4": DEBUG,
    "5": DEBUG,
}
LEVEL_NAMES = tuple(_LEVELS)  # what a directive may name as a level (any case)
_PART = re.compile(r"^(?P<target>[\w:.\-]*)(?P<span>\[[^\[\]]*\])?(?:=(?P<level>\w+))?$")
_FORMS = "a level (trace, debug, info, warn, error, off), target=level or a list of them"


@value_object
class LogFilter:
    """The level one process logs at, and the parts of the directive it had no use for."""

    level: int = INFO
    unused: tuple[str, ...] = ()

    @classmethod
    def parse(cls, directive: str, component: str) -> LogFilter:
        """The filter `directive` sets for `component`; ValueError for a malformed part."""
        best: tuple[int, int] = (0, INFO)  # (how specific, level)
        unused: list[str] = []
        for raw in directive.split(","):
            part = raw.strip()
            if not part:
                continue
            target, level = _split(part)
            rank = _rank(target, component)
            if rank is None:
                unused.append(part)
            elif rank and rank >= best[0]:
                best = (rank, level)
        return cls(level=best[1], unused=tuple(unused))


def check_directive(directive: str) -> str:
    """`directive` unchanged when every part of it is well-formed; ValueError otherwise."""
    LogFilter.parse(directive, COMPONENTS[0])
    return directive


def _split(part: str) -> tuple[str | None, int]:
    """(target or None for a bare level, level) of one part."""
    if part.lower() in _LEVELS:
        return None, _LEVELS[part.lower()]
    match = _PART.match(part)
    level_text = (match.group("level") or "trace").lower() if match else ""
    if match is None or level_text not in _LEVELS:
        raise ValueError(f"{part!r} is not {_FORMS}")
    return match.group("target"), _LEVELS[level_text]


def _rank(target: str | None, component: str) -> int | None:
    """How specifically `target` names `component`: 1 a bare level, 2 shared, 3 its own; 0 for
    another component's target (not ours to report), None for a target brupop cannot map."""
    if target is None:
        return 1
    crate = re.split(r"::|\.", target, maxsplit=1)[0].lower().replace("-", "_")
    if crate == component:
        return 3
    if crate in SHARED_TARGETS:
        return 2
    if crate in COMPONENTS:
        return 0
    return None
