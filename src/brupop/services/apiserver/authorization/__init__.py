"""Who may call the apiserver: the agent pod on the node it names, checked by TokenReview or
locally."""
