"""The update domain: states, shadows, host answers and policies. Pure: no I/O, no clock reads."""
