"""What one controller replica is given, one object per concern (its settings are the
ControllerConfig): ControllerPorts, the outside world it reaches (the cluster's ports, the
clock, the gates' adapters), and ControllerMetrics, where it reports.

Plain objects: the composition root (`brupop.entrypoints.controller.container`) fills them in,
and the services never know how they were wired.
"""

from __future__ import annotations

from dataclasses import dataclass, field

from brupop.ports.clock import Clock
from brupop.ports.cluster.event_recorder import EventRecorder
from brupop.ports.cluster.lease_store import LeaseStore
from brupop.ports.cluster.node_repository import NodeRepository
from brupop.ports.cluster.pod_repository import PodRepository
from brupop.ports.cluster.shadow_repository import ShadowRepository
from brupop.ports.cluster.update_policy_repository import UpdatePolicyRepository
from brupop.ports.monitoring.rollout_metrics import RolloutMetrics
from brupop.ports.monitoring.safety_metrics import SafetyMetrics
from brupop.services.controller.runtime.quiet_metrics import QuietMetrics
from brupop.services.controller.safety.rollout_safety import GatePorts
from brupop.services.controller.starts.start_rules import StartPorts


@dataclass(frozen=True)
class ControllerPorts:
    """The cluster as one controller replica reaches it."""

    shadows: ShadowRepository
    nodes: NodeRepository
    pods: PodRepository
    leases: LeaseStore
    events: EventRecorder
    clock: Clock
    policies: UpdatePolicyRepository | None = None
    """The update policies to follow; None: the environment's policy only (the behaviour
    before the policy object)."""
    gates: GatePorts | None = None
    """What the health gate and the alert gate read; None: no gate can be checked."""
    starts: StartPorts | None = None
    """What the start rules read beyond the shadows and Nodes; None: the defaults."""


@dataclass(frozen=True)
class ControllerMetrics:
    """Where a replica reports: the rollout's metrics and the safety rules' (often one object)."""

    rollout: RolloutMetrics = field(default_factory=QuietMetrics)
    safety: SafetyMetrics = field(default_factory=QuietMetrics)
