"""`brupop controller`: settings, wiring, the metrics/health/status HTTP surface, the process."""
