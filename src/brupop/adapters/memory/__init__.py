"""The in-memory cluster: the embedded default behind `brupop simulate` and the tests."""
