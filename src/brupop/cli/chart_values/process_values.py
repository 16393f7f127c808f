"""The chart values that reach a process as an environment variable, each with the JSON schema
its process's settings imply: bounds read from the settings models (the controller's and the
apiserver's pydantic fields, the agent's readers), patterns for the rules a validator checks.

The chart takes whole numbers only (as strings, the original's form, or as integers); the
processes also take fractions of a second, so the chart is never looser than a process.
"""

from __future__ import annotations

import math
from collections.abc import Iterable
from dataclasses import dataclass
from typing import Any

import annotated_types
from pydantic import BaseModel

from brupop.cli.chart_values.number_pattern import whole_number_pattern
from brupop.domain.object_names import DNS_SUBDOMAIN_MAX, DNS_SUBDOMAIN_PATTERN
from brupop.domain.policy.drain_rules import FORCE_ALLOWANCE_MAX_LENGTH, NAMESPACE_NAME
from brupop.domain.reporting.notifications import NotificationKind
from brupop.domain.rollout.concurrency import UNLIMITED
from brupop.domain.windows.cron_schedule import EXPRESSION_MAX_LENGTH
from brupop.domain.windows.maintenance_window import LEGACY_TIME
from brupop.entrypoints.agent.setting_readers import Seconds, WholeNumber
from brupop.entrypoints.agent.settings import reader_of
from brupop.entrypoints.apiserver.settings import ApiserverSettings
from brupop.entrypoints.controller.settings import ControllerSettings
from brupop.entrypoints.logging.log_filter import LEVEL_NAMES
from brupop.entrypoints.logging.log_settings import FORMATTERS

Schema = dict[str, Any]
ValuePath = tuple[str, ...]


@dataclass(frozen=True)
class Bounds:
    """The whole numbers a setting takes, from `least` to `most`."""

    least: int
    most: int

    def within(self, other: Bounds) -> Bounds:
        """The numbers both take."""
        return Bounds(max(self.least, other.least), min(self.most, other.most))


def model_bounds(model: type[BaseModel], variable: str) -> Bounds:
    """The bounds of the pydantic field read from environment variable `variable`."""
    (field,) = [f for f in model.model_fields.values() if f.alias == variable]
    least, most = -math.inf, math.inf
    for rule in field.metadata:
        if isinstance(rule, annotated_types.Ge):
            least = max(least, math.ceil(float(rule.ge)))  # type: ignore[arg-type]
        elif isinstance(rule, annotated_types.Gt):
            least = max(least, math.floor(float(rule.gt)) + 1)  # type: ignore[arg-type]
        elif isinstance(rule, annotated_types.Le):
            most = min(most, math.floor(float(rule.le)))  # type: ignore[arg-type]
    return Bounds(int(least), int(most))


def agent_bounds(variable: str) -> Bounds:
    """The bounds of the agent's reader of `variable`."""
    reader = reader_of(variable)
    if isinstance(reader, WholeNumber):
        return Bounds(reader.least, reader.most)
    if isinstance(reader, Seconds):
        return Bounds(0 if reader.zero else 1, math.floor(reader.most))
    raise TypeError(f"{variable} is not read as a number")


def _drain_timeout() -> Bounds:
    """DRAIN_TIMEOUT_SECONDS, read by the apiserver and the agent; the apiserver also wants it
    longer than its eviction retry interval, which the chart leaves at its default."""
    retry = ApiserverSettings.model_fields["eviction_retry_interval_seconds"].default
    longer = Bounds(math.floor(retry) + 1, 2**63)
    apiserver = model_bounds(ApiserverSettings, "DRAIN_TIMEOUT_SECONDS")
    return apiserver.within(agent_bounds("DRAIN_TIMEOUT_SECONDS")).within(longer)


def number_bounds() -> dict[ValuePath, tuple[Bounds, str]]:
    """Each numeric chart value: its bounds and the variable(s) it sets."""
    api, ctl = ApiserverSettings, ControllerSettings
    table: dict[ValuePath, str] = {
        ("exclude_from_lb_wait_time_in_sec",): "EXCLUDE_FROM_LB_WAIT_TIME_IN_SEC",
        ("apiserver_service_port",): "APISERVER_SERVICE_PORT",
    }
    found: dict[ValuePath, tuple[Bounds, str]] = {
        path: (agent_bounds(variable), variable) for path, variable in table.items()
    }
    for path, variable in {
        ("apiserver_internal_port",): "APISERVER_INTERNAL_PORT",
        ("apiserver_webhook_port",): "APISERVER_WEBHOOK_PORT",
        ("apiserver_max_connections",): "APISERVER_MAX_CONNECTIONS",
        ("apiserver_webhook_max_connections",): "APISERVER_WEBHOOK_MAX_CONNECTIONS",
        ("apiserver_max_connections_per_address",): "APISERVER_MAX_CONNECTIONS_PER_ADDRESS",
    }.items():
        found[path] = (model_bounds(api, variable), variable)
    for name, variable in {
        "idle_seconds": "TIMEOUT_IDLE_SECONDS",
        "staged_and_performed_update_seconds": "TIMEOUT_STAGED_AND_PERFORMED_UPDATE_SECONDS",
        "rebooted_into_update_seconds": "TIMEOUT_REBOOTED_INTO_UPDATE_SECONDS",
        "monitoring_update_seconds": "TIMEOUT_MONITORING_UPDATE_SECONDS",
    }.items():
        found[("state_timeouts", name)] = (model_bounds(ctl, variable), variable)
    grace = "VARIANT_OFFER_GRACE_SECONDS"
    found[("variant_offer_grace_seconds",)] = (model_bounds(ctl, grace), grace)
    found[("drain_timeout_seconds",)] = (_drain_timeout(), "DRAIN_TIMEOUT_SECONDS")
    return found


def _number(bounds: Bounds, variable: str, *, empty: bool = False) -> Schema:
    unset = ', or "" for the default' if empty else ""
    return {
        "type": ["string", "integer"],
        "pattern": whole_number_pattern(bounds.least, bounds.most, empty=empty),
        "minimum": bounds.least,
        "maximum": bounds.most,
        "description": f"{variable}: a whole number from {bounds.least} to {bounds.most}{unset}",
    }


def _any_case(word: str) -> str:
    return "".join(f"[{c.lower()}{c.upper()}]" for c in word)


def _words(words: Iterable[str]) -> str:
    return "|".join(_any_case(word) for word in words)


def _bare(pattern: str) -> str:
    """A pattern without its anchors, to be part of a larger one."""
    return pattern.removeprefix("^").removesuffix("$")


# The cron format's shape: 6 or 7 fields of numbers, names, `*`, `?`, lists, ranges and steps,
# or a shorthand. Which names and numbers each field takes is left to the controller.
_CRON_FIELD = r"[0-9A-Za-z*?,/-]+"
_CRON = (
    rf"^\s*(?:@(?:yearly|monthly|weekly|daily|hourly)|{_CRON_FIELD}(?:\s+{_CRON_FIELD}){{5,6}})\s*$"
)
_LEGACY = _bare(LEGACY_TIME.pattern)
_NAMESPACE = _bare(NAMESPACE_NAME.pattern)
_LEVEL = rf"(?:{_words(LEVEL_NAMES)})"
_FILTER_PART = rf"(?:[\w:.-]*(?:\[[^\[\]]*\])?(?:={_LEVEL})?)"
_EVENTS = ["all", *(kind.value for kind in NotificationKind)]


def text_rules() -> dict[ValuePath, Schema]:
    """Each chart value a process checks by a rule rather than by bounds."""
    level_filter = {
        "type": "string",
        "pattern": rf"^\s*{_FILTER_PART}(?:\s*,\s*{_FILTER_PART})*\s*$",
        "description": "TRACING_FILTER_DIRECTIVE: a level or target=level, comma-separated",
    }
    return {
        ("namespace",): {"type": "string", "pattern": f"^{_NAMESPACE}$", "maxLength": 63},
        ("max_concurrent_updates",): {
            "type": ["string", "integer"],
            "pattern": f"^(?:0*[1-9][0-9]*|{_any_case(UNLIMITED)})$",
            "minimum": 1,
            "description": "MAX_CONCURRENT_UPDATE: a positive whole number or unlimited",
        },
        ("release_age_quorum",): _number(
            model_bounds(ControllerSettings, "RELEASE_AGE_QUORUM"), "RELEASE_AGE_QUORUM", empty=True
        ),
        ("scheduler_cron_expression",): {
            "type": "string",
            "pattern": _CRON,
            "maxLength": EXPRESSION_MAX_LENGTH,
            "description": "SCHEDULER_CRON_EXPRESSION: 6 or 7 fields, seconds first",
        },
        ("scheduler_time_zone",): {
            "type": "string",
            "pattern": r"^[A-Za-z][A-Za-z0-9_+-]*(?:/[A-Za-z0-9_+-]+)*$",
            "description": "SCHEDULER_TIME_ZONE: an IANA zone name such as Europe/Paris",
        },
        ("update_window_start",): {"type": "string", "pattern": f"^(?:{_LEGACY})?$"},
        ("update_window_stop",): {"type": "string", "pattern": f"^(?:{_LEGACY})?$"},
        ("apiserver_force_namespaces_allowed",): {
            "type": "string",
            "maxLength": FORCE_ALLOWANCE_MAX_LENGTH,
            "pattern": rf"^[\s,]*(?:{_NAMESPACE}(?:[\s,]+{_NAMESPACE})*)?[\s,]*$",
        },
        ("cluster_domain",): {
            "type": "string",
            "pattern": DNS_SUBDOMAIN_PATTERN,
            "maxLength": DNS_SUBDOMAIN_MAX,
        },
        ("logging", "formatter"): {"enum": list(FORMATTERS)},
        ("logging", "controller", "tracing_filter"): level_filter,
        ("logging", "agent", "tracing_filter"): level_filter,
        ("logging", "apiserver", "tracing_filter"): level_filter,
        ("notifications", "webhooks"): _webhooks(),
    }


def _webhooks() -> Schema:
    named = {"type": "string", "minLength": 1}
    secret = {
        "type": "object",
        "properties": {"name": named, "key": named},
        "required": ["name", "key"],
    }
    return {
        "type": "array",
        "maxItems": 8,
        "items": {
            "type": "object",
            "properties": {
                "url": {"type": "string", "pattern": r"^[hH][tT][tT][pP][sS]?://[^\s/]+\S*$"},
                "urlFromSecret": secret,
                "format": {"enum": ["json", "slack"]},
                "events": {"type": "array", "minItems": 1, "items": {"enum": _EVENTS}},
            },
            "oneOf": [{"required": ["url"]}, {"required": ["urlFromSecret"]}],
        },
    }


def process_values() -> dict[ValuePath, Schema]:
    """Every chart value a process validates, with its schema."""
    found = {path: _number(*entry) for path, entry in number_bounds().items()}
    return {**found, **text_rules()}
