"""The capacity check: is there room elsewhere for the pods a drain would evict, over a census
of the fleet, and what evicting a node costs. Imports everything below it, never reporting."""
