"""`brupop agent`: settings, wiring and signal handling of the node agent."""

import sys

# structlog imports `rich` when it is installed, only to render tracebacks prettily. It costs
# the agent ~4 MiB of resident memory, and the agent never prints rich tracebacks; a None entry
# makes `import rich` fail fast, so structlog falls back to plain ones. This runs before any
# module of the agent imports structlog.
sys.modules.setdefault("rich", None)  # type: ignore[arg-type]
