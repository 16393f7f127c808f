"""The apiserver over real HTTPS on loopback, driven by the agent's HTTPS client."""
