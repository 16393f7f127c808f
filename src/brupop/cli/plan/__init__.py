"""`brupop plan`: the order and the moments of a rollout, before it runs."""
