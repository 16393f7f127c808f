"""The README and docs/ as a reader follows them: every relative link reaches a file, every
anchor a heading of that file (as GitHub names it), and no line speaks of how the project is
run (issue numbers, waves, sessions) instead of what the product does."""

from __future__ import annotations

import re
from pathlib import Path

import pytest

ROOT = Path(__file__).resolve().parents[2]
PAGES = [ROOT / "README.md", *sorted((ROOT / "docs").glob("*.md"))]
_LINK = re.compile(r"\[[^\]]*\]\(([^)\s]+)\)")
_HEADING = re.compile(r"^#{1,6}\s+(.*?)\s*#*\s*$")
_FENCE = re.compile(r"^\s*(```|~~~)")
_EXPLICIT = re.compile(r"<a\s+(?:id|name)=\"([^\"]+)\"")
TEAM_WORDS = re.compile(
    r"\bissues? #?\d+|\bwaves?\b|\bthe study\b|\bthe lead\b|\bhelpers?\b|\bsessions?\b(?! cache)",
    re.IGNORECASE,
)


def _prose(page: Path) -> list[tuple[int, str]]:
    """The page's lines outside code fences, numbered from 1."""
    lines, fenced = [], False
    for number, line in enumerate(page.read_text(encoding="utf-8").splitlines(), start=1):
        if _FENCE.match(line):
            fenced = not fenced
            continue
        if not fenced:
            lines.append((number, line))
    return lines


def slug(heading: str) -> str:
    """A heading's anchor as GitHub makes it: markup and punctuation out, lower case, spaces
    to hyphens."""
    text = re.sub(r"`|\*\*|__|\[([^\]]*)\]\([^)]*\)", r"\1", heading).strip().lower()
    text = re.sub(r"[^\w\- ]", "", text)
    return text.replace(" ", "-")


def anchors(page: Path) -> set[str]:
    """Every anchor of `page`: its headings' (repeats numbered -1, -2, ...) and explicit ones."""
    seen: dict[str, int] = {}
    found: set[str] = set()
    for _, line in _prose(page):
        found.update(_EXPLICIT.findall(line))
        heading = _HEADING.match(line)
        if heading is None:
            continue
        base = slug(heading.group(1))
        count = seen.get(base, 0)
        seen[base] = count + 1
        found.add(base if count == 0 else f"{base}-{count}")
    return found


def _broken_links(page: Path) -> list[str]:
    broken = []
    for number, line in _prose(page):
        for target in _LINK.findall(line):
            if re.match(r"^[a-z]+:", target):  # http:, https:, mailto:
                continue
            path_part, _, anchor = target.partition("#")
            linked = (page.parent / path_part).resolve() if path_part else page
            where = f"{page.relative_to(ROOT)}:{number}: {target}"
            if not linked.exists():
                broken.append(f"{where} (no such file)")
            elif anchor and linked.suffix == ".md" and anchor not in anchors(linked):
                broken.append(f"{where} (no such heading)")
    return broken


def test_the_slug_of_a_heading_is_githubs() -> None:
    assert slug("5. Check it works: brupop doctor") == "5-check-it-works-brupop-doctor"
    assert (
        slug("1. Agent footprint (`agent_footprint.py`)") == "1-agent-footprint-agent_footprintpy"
    )


@pytest.mark.parametrize("page", PAGES, ids=lambda page: page.name)
def test_every_relative_link_and_anchor_reaches_its_target(page: Path) -> None:
    assert _broken_links(page) == []


@pytest.mark.parametrize("page", PAGES, ids=lambda page: page.name)
def test_no_line_speaks_of_how_the_project_is_run(page: Path) -> None:
    said = [
        f"{page.relative_to(ROOT)}:{number}: {line.strip()[:120]}"
        for number, line in _prose(page)
        if TEAM_WORDS.search(line)
    ]
    assert said == []
