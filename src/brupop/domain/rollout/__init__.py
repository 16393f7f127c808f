"""The rollout's core decisions: the next spec of a shadow, the book of decisions, concurrency,
order, backoff and transition timeouts. Imports the domain root only."""
