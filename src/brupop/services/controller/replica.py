"""Where one controller replica reports: ControllerMetrics, the rollout's metrics and the safety
rules' (often one object). Its settings are the ControllerConfig; what it reaches (the cluster,
the clock, the prober, the alert source) its container gives each service, one by one.
"""

from __future__ import annotations

from dataclasses import dataclass, field

from brupop.ports.monitoring.rollout_metrics import RolloutMetrics
from brupop.ports.monitoring.safety_metrics import SafetyMetrics
from brupop.services.controller.runtime.quiet_metrics import QuietMetrics


@dataclass(frozen=True)
class ControllerMetrics:
    """Where a replica reports: the rollout's metrics and the safety rules' (often one object)."""

    rollout: RolloutMetrics = field(default_factory=QuietMetrics)
    safety: SafetyMetrics = field(default_factory=QuietMetrics)
