"""The start rules: one module per rule (budgets, schedule, versions, autoscaler, ...), the
StartRule protocol (start_holds) and the order and selection that apply them. Imports
everything below it (root, host, cluster, windows, rollout, policy), never safety, capacity
or reporting."""
