"""`brupop simulate`: a whole rollout on one machine (in-memory cluster, real processes)."""
