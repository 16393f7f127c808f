"""The rollout controller: decides which nodes move on, within limits, windows and timeouts."""
