"""A real Kubernetes control plane on loopback: etcd, kube-apiserver, kube-controller-manager
and kwok, built from source through the Go module proxy (`build`) and run (`up`, `down`).

Driven by `scripts/control-plane`; see docs/control-plane.md.
"""
