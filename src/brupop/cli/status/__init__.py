"""`brupop status`: every node's update state and why it waits, like `kubectl get brs` plus a
REASON column; read from the controller's `/status` or computed in-process (`brupop simulate`)."""
