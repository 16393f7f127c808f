"""Adapters: implementations of the ports over real technology (subprocess, HTTPS, Kubernetes)."""
