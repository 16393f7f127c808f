"""Cluster ports: Nodes, pods, shadows, update policies, Leases, Events and workloads."""
