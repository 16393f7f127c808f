"""The chart's values schema, generated from the processes' settings (deploy/render writes it)."""
