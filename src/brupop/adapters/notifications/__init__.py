"""Notifiers: webhooks that hear about a rollout."""
