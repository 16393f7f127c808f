"""The apiserver use cases: authorization, drains, node actions, the shadow feed."""
