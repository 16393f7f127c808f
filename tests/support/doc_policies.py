"""The update-policy examples of the docs, and what each says `brupop simulate` makes of it.

Every ```yaml block of docs/*.md that holds a BottlerocketUpdatePolicy must be followed, before
the next such block, by a line of the form

    *Simulated:* `brupop simulate FLAGS --policy FILE` ends `VERDICT...`

where FILE stands for the example itself and VERDICT is how the run's last line begins (a line
may give more than one, when the outcome depends on the hour: each starts OK, FAILED or HALTED).
"""

from __future__ import annotations

import re
from dataclasses import dataclass
from pathlib import Path

DOCS = Path(__file__).resolve().parents[2] / "docs"
POLICY_KIND = "kind: BottlerocketUpdatePolicy"
SIMULATED = re.compile(
    r"^\*Simulated:\* `brupop simulate (?P<flags>[^`]*)` ends `(?P<verdict>[^`]*)`"
)
_BLOCK = re.compile(r"^```yaml\n(?P<body>.*?)^```$", re.MULTILINE | re.DOTALL)


@dataclass(frozen=True)
class PolicyExample:
    """One example: where it is, its YAML, and the run its doc promises (none: no promise)."""

    page: str
    line: int
    yaml: str
    flags: tuple[str, ...] | None
    verdicts: tuple[str, ...]

    @property
    def name(self) -> str:
        return f"{self.page}:{self.line}"


def policy_examples() -> list[PolicyExample]:
    """Every policy example of docs/*.md, in page order."""
    examples: list[PolicyExample] = []
    for page in sorted(DOCS.glob("*.md")):
        text = page.read_text(encoding="utf-8")
        blocks = [match for match in _BLOCK.finditer(text) if POLICY_KIND in match["body"]]
        for index, block in enumerate(blocks):
            end = blocks[index + 1].start() if index + 1 < len(blocks) else len(text)
            promise = _promise(text[block.end() : end])
            examples.append(
                PolicyExample(
                    page=page.name,
                    line=text.count("\n", 0, block.start()) + 1,
                    yaml=block["body"],
                    flags=promise[0] if promise else None,
                    verdicts=promise[1] if promise else (),
                )
            )
    return examples


def _promise(after: str) -> tuple[tuple[str, ...], tuple[str, ...]] | None:
    for line in after.splitlines():
        found = SIMULATED.match(line.strip())
        if found:
            others = re.findall(r"`((?:OK|FAILED|HALTED)[^`]*)`", line[found.end() :])
            return tuple(found["flags"].split()), (found["verdict"], *others)
    return None
