"""The scenarios a simulation can stage: the fleet's shape, host faults, reboot-hook responders,
a pause and resume, chaos kills. Imports nothing of simulate."""
