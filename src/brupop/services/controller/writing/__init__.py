"""What a pass writes and remembers writing: the rollout writer, its journal, the opt-out
cleanup and the failures a REASON recalls. Imports ports and the domain only."""
