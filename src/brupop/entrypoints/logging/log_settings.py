"""The two logging settings every brupop process reads: LOGGING_FORMATTER, TRACING_FILTER_DIRECTIVE.

Kept apart from `logs` (which configures structlog) so that the agent, which writes its lines
without structlog or pydantic, checks and applies them the same way without loading them.
The pydantic field types of the controller and apiserver settings are in `log_fields`.
"""

from __future__ import annotations

FORMATTERS = ("auto", "json", "pretty", "full", "compact")


def check_formatter(value: str) -> str:
    """LOGGING_FORMATTER, lower-cased; ValueError when it is not one brupop knows."""
    formatter = value.strip().lower()
    if formatter not in FORMATTERS:
        raise ValueError(f"{value!r} is not one of {', '.join(FORMATTERS)}")
    return formatter


def writes_json(formatter: str | None, *, on_terminal: bool) -> bool:
    """JSON lines or readable ones: `json` always, `auto` (the default) off a terminal."""
    checked = check_formatter(formatter or "auto")
    return checked == "json" or (checked == "auto" and not on_terminal)
