"""One adapter per Kubernetes resource brupop reads or writes: Nodes, pods, shadows, update
policies, Leases, Events, workloads."""
