"""`brupop status` lines about waiting versions, from the `/status` `versions` list."""

from __future__ import annotations

from typing import Any

from brupop.cli.status.version_lines import version_lines


def _entry(**fields: Any) -> dict[str, Any]:
    return {
        "version": "1.21.0",
        "first_seen": "2026-11-30T09:00:00+00:00",
        "eligible_at": "2026-12-01T09:00:00+00:00",
        "nodes": 3,
        "reason": "release_too_new",
        "waiting": "1.21.0 first offered ...; eligible at ...",
    } | fields


def test_a_version_too_new_says_when_it_becomes_eligible() -> None:
    assert version_lines([_entry()]) == [
        "Version 1.21.0 (3 nodes): eligible at 2026-12-01T09:00:00+00:00 "
        "(first offered 2026-11-30T09:00:00+00:00)"
    ]


def test_a_pinned_version_names_the_pin() -> None:
    entry = _entry(version="1.22.0", nodes=1, reason="pinned", waiting="pinned to 1.20.1")
    assert version_lines([entry]) == ["Version 1.22.0 (1 node): pinned to 1.20.1"]


def test_versions_nothing_holds_or_no_node_is_offered_give_no_line() -> None:
    entries = [_entry(reason=None, waiting=None), _entry(nodes=0)]
    assert version_lines(entries) == []


def test_an_older_controller_without_the_list_or_a_malformed_one_gives_no_line() -> None:
    assert version_lines(None) == []
    assert version_lines({"version": "1.21.0"}) == []
    assert version_lines(["1.21.0", _entry(nodes="3")]) == []
