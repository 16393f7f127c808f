"""Tests against a real control plane (etcd, kube-apiserver, kube-controller-manager, kwok)
started by `scripts/control-plane up`; they run only when this folder is named on the command
line: `pytest tests/realcluster`."""
