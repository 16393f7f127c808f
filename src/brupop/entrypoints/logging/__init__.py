"""How every process writes its lines: the settings, the original's EnvFilter directive,
structlog's JSON or console output, and the standard library's records routed through it."""
