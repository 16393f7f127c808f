"""The agent's HTTPS client to the brupop apiserver (ShadowStore and NodeOperations)."""
