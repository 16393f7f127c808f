"""Outbound HTTP for the controller's gates: health-gate probes and the Prometheus alert source."""
