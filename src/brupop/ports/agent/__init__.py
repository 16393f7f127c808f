"""The agent's ports: its host's update API, and its own shadow and node through the
brupop apiserver."""
