"""Helpers shared by test levels (certificates, ...)."""
