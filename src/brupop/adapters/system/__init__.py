"""The operating system's clock."""
