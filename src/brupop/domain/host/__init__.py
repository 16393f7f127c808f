"""The host's side of an update: Bottlerocket's answers, CommandResult, the agent's status and
steps. Imports the domain root only; the agent loads this package and the root, nothing else."""
