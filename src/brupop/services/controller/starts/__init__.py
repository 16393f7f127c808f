"""The start rules of a pass: rules in force, windows and finishBy, the capacity check, the
autoscaler guard and the offered versions. May import writing, mirrors and runtime; never
safety, policy or the root."""
