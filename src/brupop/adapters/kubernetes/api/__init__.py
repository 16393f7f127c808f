"""How brupop talks to the Kubernetes API: one call and its errors, defensive decoding,
the kubeconfig, list-then-watch."""
