"""The routes: authorization before every protected handler, the handlers, the Brupop
headers, reading requests, the wire format, errors and metrics. May import conversion."""
