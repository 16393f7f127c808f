"""Token checks over Kubernetes: TokenReview, or local verification with the issuer's keys,
the agent pods and the ServiceAccounts."""
