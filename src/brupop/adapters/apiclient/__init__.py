"""The apiclient adapter: the host's update API through the `apiclient raw` subprocess."""
