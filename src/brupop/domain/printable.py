"""Text from outside made safe to show on a terminal and to write into a status or a log.

Anything brupop reads from the cluster or from a probe's or Prometheus's answer may carry
terminal controls: an escape sequence that retitles the window, writes the clipboard (OSC 52)
or moves the cursor to overwrite a line, a bidi override that reorders what is read. The
controller passes such text through `printable` before it writes it into a status, a REASON
or a log, and every CLI passes what it prints from the cluster through it again.
"""

from __future__ import annotations

import re

ELLIPSIS = "…"
# Escape sequences, removed whole so no fragment is left to read: string sequences (OSC, DCS,
# SOS, PM, APC) up to their terminator (BEL or ST) or the end, CSI with its parameters, and any
# other two-character escape.
_ESCAPE = re.compile(
    r"\x1b[\]PX^_][^\x07\x1b]*(?:\x07|\x1b\\)?"
    r"|\x1b\[[0-?]*[ -/]*[@-~]?"
    r"|\x1b[ -~]?"
)
# Breaks of a line become one space, so words stay apart on the line that is left.
_BREAKS = re.compile("[\t\n\v\f\r\u0085\u2028\u2029]+")
# C0 controls, DEL, C1 controls, and the bidi embeddings, overrides and isolates.
_CONTROLS = re.compile("[\x00-\x1f\x7f-\x9f\u202a-\u202e\u2066-\u2069]")


def printable(text: str, limit: int | None = None) -> str:
    """`text` on one line with every control character and escape sequence taken out; cut to
    `limit` characters (an ellipsis marking the cut) when a limit is given."""
    # With a limit, only a generous head is cleaned: a huge text costs no more than a short one.
    head = text if limit is None else text[: limit * 16 + 256]
    clean = _CONTROLS.sub("", _BREAKS.sub(" ", _ESCAPE.sub("", head)))
    if limit is not None and (len(clean) > limit or len(head) < len(text)):
        return clean[: max(limit - 1, 0)] + ELLIPSIS
    return clean


def printable_lines(text: str) -> str:
    """`text` with each of its lines made printable; the line breaks themselves are kept."""
    return "\n".join(printable(line) for line in text.split("\n"))
