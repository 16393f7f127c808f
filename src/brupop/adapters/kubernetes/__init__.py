"""Kubernetes adapters over the official client, for the controller and the apiserver."""
