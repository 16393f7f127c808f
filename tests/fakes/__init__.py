"""Test doubles for the ports: Fake* record calls, InMemory* keep state."""
