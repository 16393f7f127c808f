"""The runtime kit every process runs on: informers (list, watch, a store by name) and the
supervisor that keeps their threads running."""
