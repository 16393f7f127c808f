"""The Bottlerocket update API as data: what each status code means, which update state allows
each command and what it leaves, and how long `apiclient` itself waits for each command.

Read from Bottlerocket's API server and thar-be-updates. The adapter turns a refusal into the
typed error its row names, and waits for a command no longer than its budget (or the agent's
own deadline, if shorter).
"""

from __future__ import annotations

from enum import StrEnum

from brupop.domain.host.host import CommandType, HostUpdateState
from brupop.domain.value_objects import value_object


class Refusal(StrEnum):
    """What a status code from the update API means, and so what the agent does about it."""

    NOTHING_THERE = "nothing there"
    """404: no such update, no staged image, or no update status yet (after a boot)."""
    NOT_IN_THIS_STATE = "not allowed in this state"
    """409: the host's update state does not allow the command: refresh and decide again."""
    LOCK_HELD = "lock held"
    """423: another command holds the update lock: retry with backoff."""
    FAILED = "failed"
    """500 and anything else: the host could not do it."""


STATUS_REFUSALS: dict[int, Refusal] = {
    404: Refusal.NOTHING_THERE,
    409: Refusal.NOT_IN_THIS_STATE,
    423: Refusal.LOCK_HELD,
    500: Refusal.FAILED,
}


def refusal(status: int) -> Refusal:
    """The meaning of an HTTP status the update API answered (FAILED for any other)."""
    return STATUS_REFUSALS.get(status, Refusal.FAILED)


_ANY = frozenset(HostUpdateState) - {HostUpdateState.UNKNOWN}


@value_object
class CommandRule:
    """The states a command is allowed in, the state it leaves (None: as the offer says) and
    the seconds `apiclient` waits for it."""

    allowed_in: frozenset[HostUpdateState]
    leaves: HostUpdateState | None
    wait_budget_seconds: float


COMMAND_RULES: dict[CommandType, CommandRule] = {
    CommandType.REFRESH: CommandRule(_ANY, None, 10.0),
    CommandType.PREPARE: CommandRule(
        frozenset({HostUpdateState.AVAILABLE, HostUpdateState.STAGED}),
        HostUpdateState.STAGED,
        600.0,
    ),
    CommandType.ACTIVATE: CommandRule(
        frozenset({HostUpdateState.STAGED}), HostUpdateState.READY, 5.0
    ),
    CommandType.DEACTIVATE: CommandRule(
        frozenset({HostUpdateState.READY}), HostUpdateState.STAGED, 5.0
    ),
}


def wait_budget(command: CommandType, deadline_seconds: float) -> float:
    """How long to wait for `command`: its `apiclient` budget, or `deadline_seconds` if
    shorter (an agent setting)."""
    rule = COMMAND_RULES.get(command)
    return deadline_seconds if rule is None else min(rule.wait_budget_seconds, deadline_seconds)
