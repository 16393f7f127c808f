"""The update policy in force: followed through an informer and applied each pass. May import
safety, starts and everything below them; never the root."""
