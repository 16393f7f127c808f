"""`brupop agent`: settings, wiring and signal handling of the node agent."""
