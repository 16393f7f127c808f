"""`brupop apiserver`: the agents' HTTPS door to the cluster (its settings, container and main).

The HTTP server itself is a driving adapter, `brupop.adapters.apiserver_http`.
`container.build_apiserver_app` and that adapter's `serving.server.serve_in_thread` let
`brupop simulate` and tests run it in-process.
"""
