"""`brupop simulate --kubeconfig`: the rehearsal over a real API server of simulate's own."""
