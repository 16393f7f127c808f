"""`brupop doctor`: check a live install, one line per check, and say what to do."""
