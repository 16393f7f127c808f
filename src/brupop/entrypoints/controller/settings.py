"""The controller's settings, read once at start from the environment (original names kept).

Everything is checked before the loop starts, the schedule included (it must parse and have a
fire time left), so a bad value stops the process at once with one line naming the variable
and the accepted forms (exit 2) instead of a crash loop later.
"""

from __future__ import annotations

import os
import socket
import uuid
from collections.abc import Mapping
from datetime import UTC, datetime, tzinfo
from typing import Literal

from pydantic import BaseModel, Field, field_validator, model_validator

from brupop.domain.object_names import (
    DNS_LABEL_MAX,
    DNS_LABEL_PATTERN,
    DNS_SUBDOMAIN_MAX,
    DNS_SUBDOMAIN_PATTERN,
)
from brupop.domain.policy.address_allowance import (
    SETTING_MAX_LENGTH,
    AddressAllowance,
    AddressAllowanceError,
)
from brupop.domain.rollout.concurrency import (
    ACCEPTED_FORMS,
    ConcurrencyLimit,
    ConcurrencyLimitError,
)
from brupop.domain.rollout.rollout import RolloutRules
from brupop.domain.starting.release_quorum import QUORUM_MOST
from brupop.domain.states import StateTimeouts
from brupop.domain.windows.maintenance_window import (
    MaintenanceWindow,
    WindowSettingError,
    choose_expression,
)
from brupop.domain.windows.zoned_window import zone_named
from brupop.entrypoints.environment_values import (
    SETTINGS_CONFIG,
    default_bind_address,
    read_settings,
)
from brupop.entrypoints.logging.log_fields import FilterDirective, LoggingFormatter
from brupop.entrypoints.pod_namespace import pod_namespace
from brupop.entrypoints.settings_error import (
    ONE_DAY,
    ONE_HOUR,
    ONE_MINUTE,
    ONE_WEEK,
    SettingsError,
    rule_broken,
    seconds,
    whole_number,
)
from brupop.services.controller.config import ControllerConfig

VARIANT_OFFER_GRACE_MOST = 30 * ONE_DAY


def time_zone(name: str) -> tzinfo:
    """The IANA zone `name` (`utc` in any case is UTC), by the same check as a policy's
    windows; ValueError with the reason when `ZoneInfo` cannot load it."""
    return zone_named("UTC" if name.upper() == "UTC" else name)


class ControllerSettings(BaseModel):
    """Environment variables of `brupop controller` (each field's alias), defaults checked too."""

    model_config = SETTINGS_CONFIG

    node_name: str = Field(
        pattern=DNS_SUBDOMAIN_PATTERN, max_length=DNS_SUBDOMAIN_MAX, alias="MY_NODE_NAME"
    )
    max_concurrent_update: str = Field("1", alias="MAX_CONCURRENT_UPDATE")
    scheduler_cron_expression: str | None = Field(None, alias="SCHEDULER_CRON_EXPRESSION")
    update_window_start: str | None = Field(None, alias="UPDATE_WINDOW_START")
    update_window_stop: str | None = Field(None, alias="UPDATE_WINDOW_STOP")
    scheduler_time_zone: str = Field("UTC", alias="SCHEDULER_TIME_ZONE")
    tick_seconds: float = seconds("CONTROLLER_TICK_SECONDS", 2.0, most=ONE_MINUTE)
    # At least a second: a resync lists every shadow and Node, so it must never run in a loop.
    resync_seconds: float = Field(
        600.0, ge=1, le=ONE_DAY, allow_inf_nan=False, alias="CONTROLLER_RESYNC_SECONDS"
    )
    metrics_port: int = whole_number("CONTROLLER_METRICS_PORT", 8080, least=0, most=65535)
    bind_address: str = Field(
        default_factory=default_bind_address, min_length=1, alias="CONTROLLER_BIND_ADDRESS"
    )
    timeout_idle_seconds: float = seconds("TIMEOUT_IDLE_SECONDS", 120.0, most=ONE_WEEK)
    timeout_staged_seconds: float = seconds(
        "TIMEOUT_STAGED_AND_PERFORMED_UPDATE_SECONDS", 720.0, most=ONE_WEEK
    )
    timeout_rebooted_seconds: float = seconds(
        "TIMEOUT_REBOOTED_INTO_UPDATE_SECONDS", 600.0, most=ONE_WEEK
    )
    timeout_monitoring_seconds: float = seconds(
        "TIMEOUT_MONITORING_UPDATE_SECONDS", 300.0, most=ONE_WEEK
    )
    lease_seconds: float = seconds("LEADER_ELECTION_LEASE_SECONDS", 15.0, most=ONE_HOUR)
    renew_seconds: float = seconds("LEADER_ELECTION_RENEW_SECONDS", 5.0, most=ONE_HOUR / 2)
    namespace: str = Field(
        default_factory=pod_namespace,
        pattern=DNS_LABEL_PATTERN,
        max_length=DNS_LABEL_MAX,
        alias="BRUPOP_NAMESPACE",
    )
    cluster: Literal["kubernetes", "memory"] = Field("kubernetes", alias="BRUPOP_CLUSTER")
    logging_formatter: LoggingFormatter = Field("auto", alias="LOGGING_FORMATTER")
    tracing_filter_directive: FilterDirective = Field("info", alias="TRACING_FILTER_DIRECTIVE")
    # What probes and the alert gate may reach beyond the default refusals (docs/safety.md).
    probe_allowed_networks: str = Field(
        "", max_length=SETTING_MAX_LENGTH, alias="PROBE_ALLOWED_NETWORKS"
    )
    kubernetes_service_host: str = Field("", max_length=253, alias="KUBERNETES_SERVICE_HOST")
    # Nodes that must report a version before its release age starts; unset or empty: 10 % of
    # the opted-in nodes, at least 2 (always capped at the fleet).
    release_age_quorum: int | None = Field(None, ge=1, le=QUORUM_MOST, alias="RELEASE_AGE_QUORUM")
    # How long a variant may go without an offer while its peers are offered one before its
    # nodes say "no offer for this variant" (0: at once).
    variant_offer_grace_seconds: float = seconds(
        "VARIANT_OFFER_GRACE_SECONDS", 6 * ONE_HOUR, most=VARIANT_OFFER_GRACE_MOST, zero=True
    )

    @field_validator("release_age_quorum", mode="before")
    @classmethod
    def _empty_quorum_is_the_default(cls, value: object) -> object:
        return None if isinstance(value, str) and not value.strip() else value

    @field_validator("max_concurrent_update")
    @classmethod
    def _limit_parses(cls, value: str) -> str:
        try:
            ConcurrencyLimit.parse(value)
        except ConcurrencyLimitError:
            raise ValueError(f"expected {ACCEPTED_FORMS}") from None
        return value

    @field_validator("probe_allowed_networks")
    @classmethod
    def _allowance_parses(cls, value: str) -> str:
        try:
            AddressAllowance.parse(value)
        except AddressAllowanceError as error:
            raise ValueError(f"{error} (expected CIDRs, addresses or host names)") from None
        return value

    @property
    def address_allowance(self) -> AddressAllowance:
        """Where probes and the alert gate may connect: the default refusals, the cluster's
        API server among them, lifted for what PROBE_ALLOWED_NETWORKS lists."""
        return AddressAllowance.parse(
            self.probe_allowed_networks, api_server=(self.kubernetes_service_host,)
        )

    @field_validator("scheduler_time_zone")
    @classmethod
    def _zone_exists(cls, value: str) -> str:
        time_zone(value)
        return value

    @model_validator(mode="after")
    def _lease_outlasts_two_renewals(self) -> ControllerSettings:
        lease, renew = "LEADER_ELECTION_LEASE_SECONDS", "LEADER_ELECTION_RENEW_SECONDS"
        if self.lease_seconds != int(self.lease_seconds):
            raise rule_broken(
                lease,
                "must be a whole number of seconds, as a Lease holds it"
                f" (got {self.lease_seconds:g})",
            )
        if self.lease_seconds < 2 * self.renew_seconds:
            raise rule_broken(
                lease,
                f"must be at least twice {renew}"
                f" ({self.lease_seconds:g} < 2 x {self.renew_seconds:g})",
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
            raise SettingsError(error.variable, error.problem) from None
        timeouts = StateTimeouts(
            idle=self.timeout_idle_seconds,
            staged_and_performed_update=self.timeout_staged_seconds,
            rebooted_into_update=self.timeout_rebooted_seconds,
            monitoring_update=self.timeout_monitoring_seconds,
        )
        rules = RolloutRules(
            ConcurrencyLimit.parse(self.max_concurrent_update), timeouts, self.node_name
        )
        return ControllerConfig(
            rollout_rules=rules,
            window=window,
            namespace=self.namespace,
            identity=identity or replica_identity(),
            tick_seconds=self.tick_seconds,
            resync_seconds=self.resync_seconds,
            lease_seconds=self.lease_seconds,
            renew_seconds=self.renew_seconds,
            release_age_quorum=self.release_age_quorum,
            variant_offer_grace_seconds=self.variant_offer_grace_seconds,
        )

    @property
    def legacy_window_ignored(self) -> bool:
        """Both a cron expression and the deprecated window are set (the cron one wins)."""
        return self.scheduler_cron_expression is not None and self.update_window_start is not None


def replica_identity() -> str:
    """This replica's name in the Lease: the pod name plus a random suffix, like client-go."""
    host = os.environ.get("HOSTNAME") or socket.gethostname() or "brupop-controller"
    return f"{host}_{uuid.uuid4().hex[:8]}"


def load_settings(
    now: datetime | None = None, environ: Mapping[str, str] | None = None
) -> tuple[ControllerSettings, ControllerConfig]:
    """Read and check the environment (`os.environ` unless given); SettingsError names the
    first variable at fault."""
    settings = read_settings(ControllerSettings, os.environ if environ is None else environ)
    return settings, settings.controller_config(now or datetime.now(UTC))
