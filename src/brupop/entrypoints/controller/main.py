"""`brupop controller`: check the settings, wire the controller, serve HTTP, loop until SIGTERM.

Bad settings end the process at once with one line naming the variable and the accepted forms
(exit 2). On SIGTERM the loop stops at the end of its pass and releases the leader Lease, so
another replica takes over at once; the exit code is then 0.
"""

from __future__ import annotations

import os
import signal
import sys
import threading

import structlog

from brupop.entrypoints.controller.container import ControllerContainer
from brupop.entrypoints.controller.notification_settings import load_notification_settings
from brupop.entrypoints.controller.settings import ControllerSettings, load_settings
from brupop.entrypoints.invocation import EXIT_FATAL, EXIT_OK, answer_arguments
from brupop.entrypoints.logging.logs import start_logging
from brupop.entrypoints.settings_error import SettingsError, refuse_start
from brupop.ports.errors import PortError

USAGE = """usage: brupop controller

Run the rollout controller. Configured by environment variables (see docs/controller.md):
MY_NODE_NAME (required), MAX_CONCURRENT_UPDATE (1 | N | unlimited),
SCHEDULER_CRON_EXPRESSION (`sec min hour day-of-month month day-of-week [year]`),
UPDATE_WINDOW_START/UPDATE_WINDOW_STOP (deprecated), SCHEDULER_TIME_ZONE (UTC),
CONTROLLER_TICK_SECONDS, CONTROLLER_METRICS_PORT, CONTROLLER_BIND_ADDRESS, TIMEOUT_*_SECONDS,
LEADER_ELECTION_LEASE_SECONDS, LEADER_ELECTION_RENEW_SECONDS, BRUPOP_NAMESPACE,
BRUPOP_CLUSTER (kubernetes | memory), CLUSTER_NAME, NOTIFICATION_WEBHOOK_<n>_URL/_FORMAT/_EVENTS
(see docs/notifications.md)."""


def main(argv: list[str]) -> int:
    """Run the controller; the exit code says how it ended."""
    answered = answer_arguments("controller", argv, USAGE)
    if answered is not None:
        return answered
    try:
        settings, config = load_settings()
        notifications = load_notification_settings(os.environ)
    except SettingsError as error:
        return refuse_start("controller", error)
    log = _start_logging(settings)
    container = ControllerContainer(
        config=config,
        notification_settings=notifications,
        address_allowance=settings.address_allowance,
    )
    container.settings.from_dict(settings.model_dump())
    try:
        service = container.service()
        server = container.serving()  # bound and serving until shutdown_resources
    except (OSError, PortError) as error:
        print(f"brupop controller: cannot start: {error}", file=sys.stderr)
        return EXIT_FATAL
    stop = threading.Event()
    for stop_signal in (signal.SIGTERM, signal.SIGINT):
        signal.signal(stop_signal, lambda _signal, _frame: stop.set())
    log.info(
        "controller.serving",
        port=server.port,
        cluster=settings.cluster,
        max_concurrent_update=str(config.rollout_rules.limit),
        schedule=config.window.schedule.expression,
        schedule_kind=config.window.kind.value,
        time_zone=str(config.window.zone),
    )
    try:
        service.run(stop)
    finally:
        container.shutdown_resources()
    return EXIT_OK


def _start_logging(settings: ControllerSettings) -> structlog.stdlib.BoundLogger:
    """Logging as LOGGING_FORMATTER and TRACING_FILTER_DIRECTIVE say; every line of this thread
    (the loop's) carries the component and the node."""
    log = start_logging(
        "controller",
        settings.node_name,
        formatter=settings.logging_formatter,
        directive=settings.tracing_filter_directive,
    )
    structlog.contextvars.bind_contextvars(component="controller", node=settings.node_name)
    if settings.legacy_window_ignored:
        log.warning("schedule.legacy_window_ignored", used="SCHEDULER_CRON_EXPRESSION")
    return log
