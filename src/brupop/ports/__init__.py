"""Ports: the Protocols services need from the outside world (host, cluster, apiserver, time)."""
