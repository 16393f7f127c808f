"""The node agent: drives its own node through the update state machine."""
