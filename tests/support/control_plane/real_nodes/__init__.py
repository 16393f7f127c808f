"""Real nodes beside the control plane: containerd and a kubelet per node, kube-scheduler, the
daemonset and node-lifecycle controllers, kube-proxy and CoreDNS, all on this machine and torn
down without a trace (docs/control-plane.md, "Real nodes")."""
