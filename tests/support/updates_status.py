"""`GET /updates/status` as Bottlerocket answers it, for the tests that read the answer: one
body with an update chosen and a refresh recorded."""

from __future__ import annotations

from typing import Any


def updates_status_body(*, running: str, chosen: str, variant: str) -> dict[str, Any]:
    """The body of a host running `running` that offers and has chosen `chosen`."""
    return {
        "update_state": "Available",
        "available_updates": [chosen, running],
        "chosen_update": {"arch": "x86_64", "version": chosen, "variant": variant},
        "active_partition": {
            "image": {"arch": "x86_64", "version": running, "variant": variant},
            "next_to_boot": True,
        },
        "staging_partition": None,
        "most_recent_command": {
            "cmd_type": "refresh",
            "cmd_status": "Success",
            "timestamp": "2026-01-05T10:00:00.123456789Z",
            "exit_status": 0,
            "stderr": "",
        },
    }
