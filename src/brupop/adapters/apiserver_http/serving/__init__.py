"""Serving over HTTPS within bounds: admitted connections, TLS handshakes and renewal, request
heads and bodies, the listeners and a quiet shutdown. May import routes (for the wire
format), never the app or the root."""
