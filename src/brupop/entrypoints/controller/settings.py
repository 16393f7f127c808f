"""The controller's settings, read once at start from the environment (original names kept).

Everything is checked before the loop starts, the schedule included (it must parse and have a
fire time left), so a bad value stops the process at once with one line naming the variable
and the accepted forms (exit 2) instead of a crash loop later.
"""

from __future__ import annotations

import os
import socket
import uuid
from datetime import UTC, datetime, tzinfo
from typing import Any, Literal
from zoneinfo import ZoneInfo, ZoneInfoNotFoundError

from pydantic import Field, ValidationError, field_validator, model_validator
from pydantic_settings import BaseSettings, SettingsConfigDict

from brupop.domain.concurrency import ACCEPTED_FORMS, ConcurrencyLimit, ConcurrencyLimitError
from brupop.domain.maintenance_window import (
    MaintenanceWindow,
    WindowSettingError,
    choose_expression,
)
from brupop.domain.rollout import RolloutPolicy
from brupop.domain.states import StateTimeouts
from brupop.entrypoints.pod_namespace import pod_namespace
from brupop.services.controller.config import ControllerConfig


class SettingsError(ValueError):
    """One line naming the variable that holds a value the controller cannot use."""


def default_bind_address() -> str:
    """All IPv6 addresses when the cluster speaks IPv6 (as the original decides), else IPv4."""
    return "::" if ":" in os.environ.get("KUBERNETES_SERVICE_HOST", "") else "0.0.0.0"


def time_zone(name: str) -> tzinfo:
    """The IANA zone `name` (UTC without consulting the zone database)."""
    if name.upper() == "UTC":
        return UTC
    try:
        return ZoneInfo(name)
    except (ZoneInfoNotFoundError, ValueError):
        raise ValueError(
            f"{name!r} is not an IANA time zone name (e.g. UTC, Europe/Paris, America/New_York)"
        ) from None


class ControllerSettings(BaseSettings):
    """Environment variables of `brupop controller`."""

    model_config = SettingsConfigDict(extra="ignore", frozen=True, populate_by_name=True)

    node_name: str = Field(min_length=1, alias="MY_NODE_NAME")
    max_concurrent_update: str = Field("1", alias="MAX_CONCURRENT_UPDATE")
    scheduler_cron_expression: str | None = Field(None, alias="SCHEDULER_CRON_EXPRESSION")
    update_window_start: str | None = Field(None, alias="UPDATE_WINDOW_START")
    update_window_stop: str | None = Field(None, alias="UPDATE_WINDOW_STOP")
    scheduler_time_zone: str = Field("UTC", alias="SCHEDULER_TIME_ZONE")
    tick_seconds: float = Field(2.0, gt=0, allow_inf_nan=False, alias="CONTROLLER_TICK_SECONDS")
    resync_seconds: float = Field(
        600.0, ge=1, le=86400, allow_inf_nan=False, alias="CONTROLLER_RESYNC_SECONDS"
    )
    metrics_port: int = Field(8080, ge=0, le=65535, alias="CONTROLLER_METRICS_PORT")
    bind_address: str = Field(
        default_factory=default_bind_address, min_length=1, alias="CONTROLLER_BIND_ADDRESS"
    )
    timeout_idle_seconds: float = Field(120.0, gt=0, alias="TIMEOUT_IDLE_SECONDS")
    timeout_staged_seconds: float = Field(
        720.0, gt=0, alias="TIMEOUT_STAGED_AND_PERFORMED_UPDATE_SECONDS"
    )
    timeout_rebooted_seconds: float = Field(
        600.0, gt=0, alias="TIMEOUT_REBOOTED_INTO_UPDATE_SECONDS"
    )
    timeout_monitoring_seconds: float = Field(
        300.0, gt=0, alias="TIMEOUT_MONITORING_UPDATE_SECONDS"
    )
    lease_seconds: float = Field(15.0, gt=0, alias="LEADER_ELECTION_LEASE_SECONDS")
    renew_seconds: float = Field(5.0, gt=0, alias="LEADER_ELECTION_RENEW_SECONDS")
    namespace: str = Field(default_factory=pod_namespace, min_length=1, alias="BRUPOP_NAMESPACE")
    cluster: Literal["kubernetes", "memory"] = Field("kubernetes", alias="BRUPOP_CLUSTER")
    logging_formatter: str = Field("auto", alias="LOGGING_FORMATTER")
    tracing_filter_directive: str = Field("info", alias="TRACING_FILTER_DIRECTIVE")

    @field_validator("max_concurrent_update")
    @classmethod
    def _limit_parses(cls, value: str) -> str:
        try:
            ConcurrencyLimit.parse(value)
        except ConcurrencyLimitError:
            raise ValueError(f"expected {ACCEPTED_FORMS}") from None
        return value

    @field_validator("scheduler_time_zone")
    @classmethod
    def _zone_exists(cls, value: str) -> str:
        time_zone(value)
        return value

    @model_validator(mode="after")
    def _lease_outlasts_two_renewals(self) -> ControllerSettings:
        if self.lease_seconds < 2 * self.renew_seconds:
            lease, renew = "LEADER_ELECTION_LEASE_SECONDS", "LEADER_ELECTION_RENEW_SECONDS"
            raise ValueError(
                f"{lease}: must be at least twice {renew}"
                f" ({self.lease_seconds:g} < 2 x {self.renew_seconds:g})"
            )
        return self

    def window(self, now: datetime) -> MaintenanceWindow:
        """The maintenance window in force (cron expression, else legacy hours, else always)."""
        choice = choose_expression(
            self.scheduler_cron_expression, self.update_window_start, self.update_window_stop
        )
        return MaintenanceWindow.starting(
            choice.expression,
            now=now,
            zone=time_zone(self.scheduler_time_zone),
            variable=choice.source,
        )

    def controller_config(self, now: datetime, identity: str | None = None) -> ControllerConfig:
        """The service's configuration; SettingsError when the schedule cannot be used."""
        try:
            window = self.window(now)
        except WindowSettingError as error:
            raise SettingsError(str(error)) from None
        timeouts = StateTimeouts(
            idle=self.timeout_idle_seconds,
            staged_and_performed_update=self.timeout_staged_seconds,
            rebooted_into_update=self.timeout_rebooted_seconds,
            monitoring_update=self.timeout_monitoring_seconds,
        )
        policy = RolloutPolicy(
            ConcurrencyLimit.parse(self.max_concurrent_update), timeouts, self.node_name
        )
        return ControllerConfig(
            policy=policy,
            window=window,
            namespace=self.namespace,
            identity=identity or replica_identity(),
            tick_seconds=self.tick_seconds,
            resync_seconds=self.resync_seconds,
            lease_seconds=self.lease_seconds,
            renew_seconds=self.renew_seconds,
        )

    @property
    def legacy_window_ignored(self) -> bool:
        """Both a cron expression and the deprecated window are set (the cron one wins)."""
        return self.scheduler_cron_expression is not None and self.update_window_start is not None


def replica_identity() -> str:
    """This replica's name in the Lease: the pod name plus a random suffix, like client-go."""
    host = os.environ.get("HOSTNAME") or socket.gethostname() or "brupop-controller"
    return f"{host}_{uuid.uuid4().hex[:8]}"


def load_settings(now: datetime | None = None) -> tuple[ControllerSettings, ControllerConfig]:
    """Read and check the environment; SettingsError names the first variable at fault."""
    try:
        settings = ControllerSettings()
    except ValidationError as error:
        raise SettingsError(_first_problem(error)) from None
    return settings, settings.controller_config(now or datetime.now(UTC))


def _first_problem(error: ValidationError) -> str:
    problem: Any = error.errors(include_url=False)[0]
    location = problem.get("loc", ())
    variable = str(location[0]) if location else ""
    message = str(problem.get("msg", "invalid value")).removeprefix("Value error, ")
    if problem.get("type") == "missing":
        message = "required (the node this controller runs on, from the pod's spec.nodeName)"
    if not variable or message.startswith(("LEADER_ELECTION", variable)):
        return message
    value = problem.get("input")
    shown = ""
    if isinstance(value, str) and len(value) < 80 and repr(value) not in message:
        shown = f" (got {value!r})"
    return f"{variable}: {message}{shown}"
