"""What brupop tells people: each node's REASON, the policy status, the fleet's phase and
status, the timeline, rollout tracking and notifications. The top of the domain: it may
import any other domain package; none imports it."""
