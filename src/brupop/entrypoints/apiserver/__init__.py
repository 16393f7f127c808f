"""`brupop apiserver`: the agents' HTTPS door to the cluster (Starlette app served by uvicorn).

It imports nothing on purpose: the conversion worker process lives below it and must not load
the web stack. `container.build_apiserver_app` and `serving.server.serve_in_thread` let
`brupop simulate` and tests run it in-process.
"""
