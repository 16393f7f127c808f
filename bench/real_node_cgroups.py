"""What a real node's cgroups say about one container: CFS periods and throttled time, memory
peak and limit, OOM kills (cgroup v1, under the node's cgroup root /brupop-<node>)."""

from __future__ import annotations

from pathlib import Path
from typing import Any

CGROUPS = Path("/sys/fs/cgroup")


def container_folder(controller: str, node: str, pod_uid: str, container_id: str) -> Path | None:
    root = CGROUPS / controller / f"brupop-{node}" / "kubepods"
    for found in root.glob(f"**/pod{pod_uid}/{container_id}"):
        return found
    return None


def keyed(path: Path) -> dict[str, int]:
    pairs = (line.split() for line in path.read_text().splitlines())
    return {pair[0]: int(pair[1]) for pair in pairs if len(pair) == 2 and pair[1].isdigit()}


def container_figures(node: str, pod_uid: str, container_id: str) -> dict[str, Any]:
    """CPU throttling and memory of one container; {} when its cgroups are gone."""
    cpu = container_folder("cpu", node, pod_uid, container_id)
    memory = container_folder("memory", node, pod_uid, container_id)
    if cpu is None or memory is None:
        return {}
    stat = keyed(cpu / "cpu.stat")
    limit = int((memory / "memory.limit_in_bytes").read_text())
    peak = int((memory / "memory.max_usage_in_bytes").read_text())
    quota = int((cpu / "cpu.cfs_quota_us").read_text())
    return {
        "cpu_quota_ms_per_100ms": quota / 1000 if quota > 0 else None,
        "cfs_periods": stat.get("nr_periods", 0),
        "cfs_periods_throttled": stat.get("nr_throttled", 0),
        "cpu_throttled_seconds": round(stat.get("throttled_time", 0) / 1e9, 3),
        "memory_peak_mib": round(peak / 2**20, 1),
        "memory_limit_mib": round(limit / 2**20, 1) if limit < 2**60 else None,
        "memory_peak_of_limit": round(peak / limit, 3) if limit < 2**60 else None,
        "oom_kills": keyed(memory / "memory.oom_control").get("oom_kill", 0),
    }
