"""`brupop plan`'s domain: the controller's own rules stepped forward on a virtual clock, to say
in which order the nodes will update, when, and what holds each one back. The top of the
domain: it may import any other domain package; none imports it."""
