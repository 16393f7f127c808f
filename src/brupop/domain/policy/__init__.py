"""The BottlerocketUpdatePolicy object: its models, status, the policy in force, what changed,
its wire format, probe URLs and where they may connect, alert matchers and drain rules. Imports
the root and the host, cluster, windows and rollout packages."""
