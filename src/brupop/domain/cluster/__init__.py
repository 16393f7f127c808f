"""The Kubernetes objects brupop reads and changes (Nodes, Pods, PDBs, Leases, Events) as plain
values, with resources, quantities, taints, label selectors and drain progress. Imports the
domain root only."""
