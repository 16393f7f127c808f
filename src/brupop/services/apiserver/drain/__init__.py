"""Draining a node like `kubectl drain`, and undoing brupop's own cordon and exclusion."""
