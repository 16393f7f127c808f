"""The update policy's safety rules in a pass: the alert gate's reader, canaries, the halt,
health checks, reboot hooks and settling a gate's verdicts. May import writing, mirrors and
runtime; never starts, policy or the root."""
