"""The `brupop` command and its operator tools (status, plan, pause, doctor, ...).

It imports nothing on purpose: `brupop agent` passes through `main` and must stay light.
"""
