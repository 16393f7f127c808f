"""Services: the application loops (agent, controller, apiserver use cases), over ports only."""
