"""The BottlerocketUpdatePolicy spec: how a rollout may proceed, as a person writes it.

Field names, types and bounds are the CRD's wire format (camelCase), so the CRD is generated
from here. Every field is optional. A section left out (`healthGate`, `canary`, `alertGate`) is
switched off; a section given with some fields takes the documented defaults for the others.
What the CRD schema cannot express (selector, matcher and URL syntax, canary by selector *or*
count) is checked by the validators below; the object then fails as a whole and the controller
keeps its last good policy.
"""

from __future__ import annotations

from typing import Annotated, Any

from pydantic import (
    AfterValidator,
    BaseModel,
    ConfigDict,
    Field,
    SerializerFunctionWrapHandler,
    model_serializer,
    model_validator,
)

from brupop.domain.cluster.label_selector import (
    SELECTOR_MAX_LENGTH,
    LabelSelector,
    parse_label_selector,
)
from brupop.domain.policy.alert_matcher import MATCHER_MAX_LENGTH, AlertMatcher, parse_alert_matcher
from brupop.domain.policy.prestage import Prestage
from brupop.domain.policy.probe_url import URL_MAX_LENGTH, check_http_url, check_probe_template
from brupop.domain.policy.scheduling_policy import (
    BLACKOUTS_MAX,
    BUDGETS_MAX,
    DAY_SECONDS,
    NODE_AGE_SECONDS_MAX,
    WINDOWS_MAX,
    Blackout,
    Budget,
    ConcurrencyValue,
    DrainSpec,
    SchedulingPolicy,
    StartOrder,
    UpdateWindow,
    VersionSpec,
)
from brupop.domain.policy.wire_format import SPEC_WIRE, bounded_int, strict_bool

API_VERSION = "brupop.bottlerocket.aws/v1"
KIND = "BottlerocketUpdatePolicy"
DEFAULT_POLICY_NAME = "default"
# A Node carrying this label (value "true") is paused on its own, like the fleet by `paused`.
NODE_PAUSED_LABEL = "brupop.bottlerocket.aws/paused"
NODE_PAUSED_VALUE = "true"
# `brupop pause` marks the `default` policy it creates with this annotation, so that `brupop
# resume` can tell it from one a person wrote (domain/policy/pause_only.py).
PAUSE_CREATED_ANNOTATION = "brupop.bottlerocket.aws/created-by"
PAUSE_CREATED_VALUE = "brupop-pause"

GATE_TIMEOUT_DEFAULT = 600
GATE_TIMEOUT_MAX = DAY_SECONDS
PROBE_TIMEOUT_DEFAULT = 5
PROBE_TIMEOUT_MAX = 60
PROBES_MAX = 10
HALT_AFTER_FAILURES_DEFAULT = 1
HALT_AFTER_FAILURES_MAX = 1000
CANARY_COUNT_MAX = 1000
SOAK_SECONDS_MAX = 7 * DAY_SECONDS
MATCHERS_MAX = 20
IGNORED_ALERTS_MAX = 100
ALERT_NAME_MAX_LENGTH = 253
HOOKS_MAX = 10
HOOK_TIMEOUT_DEFAULT = 600
# A hook's answer is the annotation `brupop.bottlerocket.aws/before-reboot.<name>`; the part
# after the prefix may hold 63 characters, so the longer phase ("before-reboot.", 14) leaves 49.
HOOK_NAME_MAX_LENGTH = 49
HOOK_NAME_PATTERN = r"^[a-z0-9]([-a-z0-9]*[a-z0-9])?$"


ProbeTemplate = Annotated[
    str, Field(min_length=1, max_length=URL_MAX_LENGTH), AfterValidator(check_probe_template)
]
HttpUrl = Annotated[
    str, Field(min_length=1, max_length=URL_MAX_LENGTH), AfterValidator(check_http_url)
]


def _check_selector(text: str) -> str:
    parse_label_selector(text)
    return text


def _check_matcher(text: str) -> str:
    parse_alert_matcher(text)
    return text


SelectorText = Annotated[
    str, Field(min_length=1, max_length=SELECTOR_MAX_LENGTH), AfterValidator(_check_selector)
]
MatcherText = Annotated[
    str, Field(min_length=1, max_length=MATCHER_MAX_LENGTH), AfterValidator(_check_matcher)
]
AlertName = Annotated[str, Field(min_length=1, max_length=ALERT_NAME_MAX_LENGTH)]
HookName = Annotated[
    str, Field(min_length=1, max_length=HOOK_NAME_MAX_LENGTH, pattern=HOOK_NAME_PATTERN)
]


class HttpProbeSpec(BaseModel):
    """One HTTP check of the health gate: GET `url` must answer `expectStatus` in time."""

    model_config = SPEC_WIRE

    url: ProbeTemplate = Field(
        description="http(s) URL; {node_name} and {node_ip} are filled in for the node checked"
    )
    expect_status: int = bounded_int(200, 100, 599, "expected HTTP status")
    timeout_seconds: int = bounded_int(PROBE_TIMEOUT_DEFAULT, 1, PROBE_TIMEOUT_MAX, "per attempt")


class HealthGateSpec(BaseModel):
    """Checks a node must pass after its reboot before it counts as updated."""

    model_config = SPEC_WIRE

    timeout_seconds: int = bounded_int(
        GATE_TIMEOUT_DEFAULT,
        1,
        GATE_TIMEOUT_MAX,
        "how long the checks may take before the node fails the gate",
    )
    bootstrap_allowance_seconds: int = bounded_int(
        0,
        0,
        GATE_TIMEOUT_MAX,
        "time the host's settings.bootstrap-commands may take after the reboot, "
        "added to timeoutSeconds before a check still pending fails the node",
    )
    require_node_ready: bool = strict_bool(True, "the Node is Ready")
    require_daemon_set_pods_ready: bool = strict_bool(
        True, "every DaemonSet pod on the node is Ready"
    )
    require_evicted_workloads_recovered: bool = strict_bool(
        True, "every workload the drain evicted has its ready replicas back"
    )
    http_probes: tuple[HttpProbeSpec, ...] = Field(default=(), max_length=PROBES_MAX)

    @property
    def settle_seconds(self) -> int:
        """How long after the reboot a pending check may stay pending: the checks' timeout
        plus the allowance for bootstrap commands."""
        return self.timeout_seconds + self.bootstrap_allowance_seconds


_CHOICES = ("selector", "count")


class CanarySpec(BaseModel):
    """Nodes that update first; the rest wait until they have soaked."""

    # The schema says it too, so the apiserver refuses a canary with both or neither.
    model_config = ConfigDict(
        **SPEC_WIRE,
        json_schema_extra={"oneOf": [{"required": ["selector"]}, {"required": ["count"]}]},
    )

    selector: SelectorText | None = Field(
        default=None, description="label selector (kubectl syntax) of the canary nodes"
    )
    count: int | None = bounded_int(
        None, 1, CANARY_COUNT_MAX, "or: the first N nodes in the controller's order"
    )
    soak_seconds: int = bounded_int(
        0,
        0,
        SOAK_SECONDS_MAX,
        "how long every canary stays Idle on the new version before the rest start",
    )

    @model_serializer(mode="wrap")
    def _without_the_choice_not_made(self, write: SerializerFunctionWrapHandler) -> Any:
        """The schema's oneOf tests which of selector and count is present, so the one not
        chosen is left out rather than written as null."""
        data = write(self)
        if isinstance(data, dict):
            return {k: v for k, v in data.items() if v is not None or k not in _CHOICES}
        return data

    @model_validator(mode="after")
    def _selector_or_count(self) -> CanarySpec:
        if (self.selector is None) == (self.count is None):
            raise ValueError("canary needs exactly one of selector and count")
        return self

    @property
    def label_selector(self) -> LabelSelector | None:
        """The parsed selector, when canaries are chosen by label."""
        return None if self.selector is None else parse_label_selector(self.selector)


class AlertGateSpec(BaseModel):
    """Hold the rollout while a matching Prometheus alert fires."""

    model_config = SPEC_WIRE

    prometheus_url: HttpUrl = Field(description="base URL of the Prometheus HTTP API")
    matchers: tuple[MatcherText, ...] = Field(
        default=(),
        max_length=MATCHERS_MAX,
        description='PromQL label matchers an alert must all satisfy, e.g. severity="critical"',
    )
    ignore: tuple[AlertName, ...] = Field(
        default=(), max_length=IGNORED_ALERTS_MAX, description="alert names that never hold"
    )

    @property
    def alert_matchers(self) -> tuple[AlertMatcher, ...]:
        """The parsed matchers."""
        return tuple(parse_alert_matcher(text) for text in self.matchers)


class RebootHooksSpec(BaseModel):
    """Hooks a node waits for around its reboot: each answers with a `done` annotation."""

    model_config = SPEC_WIRE

    before_reboot: tuple[HookName, ...] = Field(
        default=(), max_length=HOOKS_MAX, description="answered before the node may reboot"
    )
    after_reboot: tuple[HookName, ...] = Field(
        default=(), max_length=HOOKS_MAX, description="answered before the health gate passes"
    )
    timeout_seconds: int = bounded_int(
        HOOK_TIMEOUT_DEFAULT,
        1,
        DAY_SECONDS,
        "how long each phase's hooks may take before the node fails",
    )


class UpdatePolicySpec(BaseModel):
    """What the `default` BottlerocketUpdatePolicy asks of the rollout."""

    model_config = SPEC_WIRE

    paused: bool = strict_bool(False, "no node starts; nodes already updating finish")
    health_gate: HealthGateSpec | None = Field(
        default=None, description="post-reboot checks; left out: none"
    )
    halt_after_failures: int = bounded_int(
        HALT_AFTER_FAILURES_DEFAULT,
        1,
        HALT_AFTER_FAILURES_MAX,
        "nodes failing (gate or ErrorReset) in one rollout before the fleet halts",
    )
    canary: CanarySpec | None = Field(default=None, description="left out: no canaries")
    alert_gate: AlertGateSpec | None = Field(default=None, description="left out: no alert gate")
    hooks: RebootHooksSpec | None = Field(
        default=None, description="before- and after-reboot hooks; left out: none"
    )
    # Scheduling (domain/policy/scheduling_policy.py): who may start, when, and in which order.
    max_concurrent: ConcurrencyValue | None = Field(
        default=None, description="overrides MAX_CONCURRENT_UPDATE; a count or a percentage"
    )
    budgets: tuple[Budget, ...] = Field(default=(), max_length=BUDGETS_MAX)
    windows: tuple[UpdateWindow, ...] = Field(
        default=(), max_length=WINDOWS_MAX, description="open when any is; none: the environment's"
    )
    blackouts: tuple[Blackout, ...] = Field(default=(), max_length=BLACKOUTS_MAX)
    finish_by: bool = strict_bool(
        True, "start a node only if its expected update ends inside the window"
    )
    version: VersionSpec | None = Field(default=None, description="left out: any version")
    min_node_age_seconds: int = bounded_int(0, 0, NODE_AGE_SECONDS_MAX, "younger nodes wait")
    blocking_pod_selector: SelectorText | None = Field(
        default=None, description="a node running a pod this label selector matches waits"
    )
    order: StartOrder = Field(default=StartOrder.CHEAPEST_FIRST)
    capacity_check: bool = strict_bool(
        True, "start a node only if the pods its drain evicts fit on the other nodes"
    )
    drain: DrainSpec | None = Field(default=None, description="left out: the environment's")
    prestage: Prestage | None = Field(
        default=None, description="prepare the chosen version ahead of each node's turn"
    )

    @property
    def scheduling(self) -> SchedulingPolicy:
        """The scheduling rules this spec asks for."""
        return SchedulingPolicy(
            max_concurrent=self.max_concurrent,
            budgets=self.budgets,
            windows=self.windows,
            blackouts=self.blackouts,
            finish_by=self.finish_by,
            version=self.version,
            min_node_age_seconds=self.min_node_age_seconds,
            blocking_pod_selector=self.blocking_pod_selector,
            order=self.order,
            capacity_check=self.capacity_check,
            drain=self.drain,
        )
