"""The scenario flags of `brupop simulate` that steer the update policy: the --policy file, a
pause and resume, the webhook for notifications and the reboot hooks' responders.
"""

from __future__ import annotations

import argparse
from pathlib import Path
from typing import Any

from brupop.cli.fleet_description.flag_values import ONE_DAY, OptionError, read_seconds
from brupop.cli.fleet_description.policy_file import PolicyFileError, load_policy_file
from brupop.domain.safety.reboot_hooks import HookPhase
from brupop.entrypoints.controller.notification_settings import url_problem
from brupop.simulation.scenarios.hook_responder import MAX_HOOKS, EmulatedHook


def add_policy_flags(scenario: argparse._ArgumentGroup) -> None:
    """Added to the `scenarios` group, after the disruption flags (the order --help shows)."""
    scenario.add_argument(
        "--policy",
        default=None,
        metavar="FILE",
        help="a BottlerocketUpdatePolicy (YAML, named default) to apply before the rollout",
    )
    scenario.add_argument(
        "--pause-at",
        default=None,
        metavar="SECONDS",
        help="set spec.paused of the policy this long after the rollout begins (the first node "
        "leaves Idle), as brupop pause would",
    )
    scenario.add_argument(
        "--resume-at",
        default=None,
        metavar="SECONDS",
        help="clear spec.paused this long after the rollout begins, as brupop resume would",
    )
    scenario.add_argument(
        "--notify",
        default=None,
        metavar="URL",
        help="send the run's notifications (json format) to this webhook, as the controller's "
        "NOTIFICATION_WEBHOOK_<n>_URL would",
    )
    scenario.add_argument(
        "--hook",
        action="append",
        default=[],
        metavar="NAME[:SECONDS|:never]",
        help="answer the --policy's reboot hook NAME on every node SECONDS (default 0) after "
        "the controller asks, or never",
    )


def read_policy(raw: str | None) -> dict[str, Any] | None:
    if raw is None:
        return None
    try:
        return load_policy_file(Path(raw).expanduser())
    except PolicyFileError as error:
        raise OptionError(f"--policy: {error}") from None


def read_hooks(raw: list[str], policy: dict[str, Any] | None) -> tuple[EmulatedHook, ...]:
    """Each `--hook NAME[:SECONDS|:never]`; NAME must be one of the policy's hooks."""
    if len(raw) > MAX_HOOKS:
        raise OptionError(f"--hook: at most {MAX_HOOKS} hooks")
    hooks = ((policy or {}).get("spec") or {}).get("hooks") or {}
    named = {
        HookPhase.BEFORE_REBOOT: set(hooks.get("beforeReboot") or ()),
        HookPhase.AFTER_REBOOT: set(hooks.get("afterReboot") or ()),
    }
    emulated: list[EmulatedHook] = []
    for text in raw:
        name, _, when = text.partition(":")
        phases = frozenset(phase for phase, names in named.items() if name in names)
        if not phases:
            raise OptionError(
                f"--hook: {name!r} is not a hook of the --policy (spec.hooks.beforeReboot or "
                "afterReboot)"
            )
        if when == "never":
            emulated.append(EmulatedHook(name, None, phases))
        else:
            seconds = read_seconds("--hook", when or "0", allow_zero=True, most=ONE_DAY)
            emulated.append(EmulatedHook(name, seconds, phases))
    return tuple(emulated)


def read_webhook(raw: str | None) -> str | None:
    if raw is None:
        return None
    problem = url_problem(raw.strip())
    if problem:
        raise OptionError(f"--notify: {problem}")
    return raw.strip()


def read_pause_moments(args: argparse.Namespace) -> dict[str, float | None]:
    """--pause-at and --resume-at, the resume later than the pause; keyed as the options are."""
    pause_at, resume_at = (
        None if raw is None else read_seconds(flag, raw, allow_zero=True, most=ONE_DAY)
        for flag, raw in (("--pause-at", args.pause_at), ("--resume-at", args.resume_at))
    )
    if pause_at is not None and resume_at is not None and resume_at <= pause_at:
        raise OptionError(f"--resume-at: {args.resume_at} must be later than --pause-at")
    return {"pause_at": pause_at, "resume_at": resume_at}
