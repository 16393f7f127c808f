"""Entrypoints: the `brupop` command and the composition roots; the only place choosing adapters."""
