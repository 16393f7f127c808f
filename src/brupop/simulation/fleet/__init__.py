"""The simulated fleet and its processes: Nodes and agent pods, certificates, the agents'
environment and supervisor, the in-process apiserver and controller, and the observer. May
import flags and scenarios."""
