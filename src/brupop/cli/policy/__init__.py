"""`brupop policy`: commands about the update policy."""
