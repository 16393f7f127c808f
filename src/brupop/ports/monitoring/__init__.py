"""Monitoring ports: the alerts and HTTP probes the safety rules read, the metrics and
notifications the controller publishes."""
