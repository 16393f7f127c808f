"""The apiserver's use cases: authorize agents, drain and restore nodes, feed shadows to agents.

Plain classes over the cluster ports; the HTTP surface lives in `brupop.entrypoints.apiserver`.
"""
