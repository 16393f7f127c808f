"""What a finished run shows: each node's outcome, the report and verdict, the timeline, the
wait reasons and the display. May import fleet, flags and scenarios."""
