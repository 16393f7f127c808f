"""The loop's surroundings: leader election over a Lease, the quiet metrics, and the notices
that turn the controller's Events and metrics into notifications. Imports ports and the
domain only."""
