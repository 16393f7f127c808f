"""Token ports: who a bearer token belongs to, asked of the cluster or checked here."""
