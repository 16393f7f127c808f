"""Rollout safety: the post-reboot health gate and its checks, the alert gate, canaries, the
halt, reboot hooks, and the workloads a drain evicted. Imports everything below it (root,
host, cluster, windows, rollout, policy), never starting, capacity or reporting."""
