"""`brupop pause` and `brupop resume`: stop and restart the rollout of the whole fleet (the
`default` BottlerocketUpdatePolicy) or of one node (its paused label), with kubectl's
configuration, and say in one line what changed."""
