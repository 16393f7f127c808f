"""brupop: rolls Bottlerocket OS updates across a Kubernetes cluster, one node at a time or more."""

__version__ = "0.1.0"
