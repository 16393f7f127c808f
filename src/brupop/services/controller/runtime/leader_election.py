"""Leader election over a coordination.k8s.io Lease: among controller replicas, one writes.

Like client-go's elector: the holder renews every `renew_seconds`; a candidate takes over only
after seeing the Lease unchanged for its whole duration on its *own* monotonic clock (clock
skew between machines does not matter); the holder stops acting once it could not renew for
`lease_seconds - renew_seconds`, before any candidate can take over; a holder that stops
releases the Lease so a candidate takes over at its next try.

What it costs kube-apiserver: a renewal is one write of the Lease the holder last wrote (a
read only when that write meets a change it did not make, as client-go's fast path); a
candidate reads the Lease once per `look_seconds` (unless said, one lease duration and one
renew interval, at most four renew intervals): a candidate that looks more often cannot take
over an expired Lease much sooner, since it must see it unchanged for a whole duration. A
released Lease is taken at the next look. With the defaults (15 s, 5 s), 0.2 requests a second
for the leader and 0.05 for each other replica; takeover 15 to 40 s after a leader vanishes,
within 20 s of a release.
"""

from __future__ import annotations

import dataclasses

import structlog

from brupop.domain.cluster.objects import Lease
from brupop.ports.clock import Clock
from brupop.ports.cluster.lease_store import LeaseStore
from brupop.ports.errors import AlreadyExistsError, ConflictError, NotFoundError, PortError

DEFAULT_LEASE_NAME = "brupop-controller-leader"


class LeaderElector:
    """Acquire, renew and release one Lease for `identity`."""

    def __init__(
        self,
        leases: LeaseStore,
        clock: Clock,
        *,
        namespace: str,
        identity: str,
        name: str = DEFAULT_LEASE_NAME,
        lease_seconds: float = 15.0,
        renew_seconds: float = 5.0,
        look_seconds: float | None = None,
    ) -> None:
        if lease_seconds <= renew_seconds:
            raise ValueError("the lease must last longer than the renew interval")
        if look_seconds is None:
            look_seconds = min(lease_seconds + renew_seconds, 4 * renew_seconds)
        self._look_seconds = look_seconds
        self._leases = leases
        self._clock = clock
        self._namespace = namespace
        self._name = name
        self.identity = identity
        self._lease_seconds = lease_seconds
        self._renew_seconds = renew_seconds
        self._lease: Lease | None = None
        self._renewed_mono: float | None = None
        self._tried_mono: float | None = None
        self._seen: tuple[str | None, str | None] | None = None
        self._seen_mono = 0.0
        self._log = structlog.get_logger(__name__).bind(identity=identity)

    def is_leader(self) -> bool:
        """This replica holds the Lease and renewed it recently enough to act."""
        if self._renewed_mono is None:
            return False
        return self._clock.monotonic() - self._renewed_mono < self._renew_deadline

    @property
    def term(self) -> int | None:
        """The Lease's transition count while this replica leads (None otherwise): it changes
        with every acquisition, even one that follows this replica's own lost lease."""
        if self._lease is None or not self.is_leader():
            return None
        return self._lease.transitions

    def seconds_until_due(self) -> float:
        """How long until the next renew (leader) or look at the Lease (candidate) is due."""
        last, every = self._renewed_mono, self._renew_seconds
        if last is None:
            last, every = self._tried_mono, self._look_seconds
        if last is None:
            return 0.0
        return max(0.0, last + every - self._clock.monotonic())

    def ensure(self) -> bool:
        """Renew or try to acquire when due; True when this replica may act now."""
        if self.seconds_until_due() <= 0:
            self._tried_mono = self._clock.monotonic()
            was_leader = self.is_leader()
            try:
                self._try()
            except PortError as error:
                self._log.warning("leader.lease_unavailable", error=type(error).__name__)
            if was_leader and not self.is_leader():
                self._log.warning("leader.lost")
        return self.is_leader()

    def release(self) -> None:
        """Give the Lease up at once (on SIGTERM) so another replica takes over quickly."""
        lease, leading = self._lease, self.is_leader()
        self._renewed_mono = None
        if lease is None or not leading or lease.holder != self.identity:
            return
        try:
            self._leases.replace(dataclasses.replace(lease, holder=None))
            self._log.info("leader.released")
        except PortError as error:
            self._log.info("leader.release_skipped", error=type(error).__name__)

    @property
    def _renew_deadline(self) -> float:
        return self._lease_seconds - self._renew_seconds

    def _try(self) -> None:
        held = self._lease
        if held is not None and held.holder == self.identity and self.is_leader():
            try:  # the fast path: the Lease as this replica last wrote it
                self._lease = self._leases.replace(
                    dataclasses.replace(held, renewed_at=self._clock.now())
                )
                self._renewed_mono = self._tried_mono
                return
            except (ConflictError, NotFoundError):
                pass  # changed (or gone) since: read it, and renew only if it is still ours
        try:
            current = self._leases.get(self._namespace, self._name)
        except NotFoundError:
            self._create()
            return
        self._lease = current
        if current.holder == self.identity and self._renewed_mono is not None:
            self._write(dataclasses.replace(current, renewed_at=self._clock.now()), "renewed")
        elif current.holder is None or self._expired(current):
            taken = dataclasses.replace(
                current,
                holder=self.identity,
                duration_seconds=int(self._lease_seconds),
                acquired_at=self._clock.now(),
                renewed_at=self._clock.now(),
                transitions=current.transitions + 1,
            )
            self._write(taken, "acquired")
        else:
            self._renewed_mono = None

    def _expired(self, lease: Lease) -> bool:
        """The holder has not changed the Lease for its whole duration, as seen from here."""
        fingerprint = (lease.holder, lease.resource_version)
        now = self._clock.monotonic()
        if fingerprint != self._seen:
            self._seen = fingerprint
            self._seen_mono = now
            return False
        return now - self._seen_mono >= lease.duration_seconds

    def _create(self) -> None:
        now = self._clock.now()
        lease = Lease(
            name=self._name,
            namespace=self._namespace,
            holder=self.identity,
            duration_seconds=int(self._lease_seconds),
            acquired_at=now,
            renewed_at=now,
        )
        try:
            self._lease = self._leases.create(lease)
        except AlreadyExistsError:
            self._renewed_mono = None
            return
        self._renewed_mono = self._clock.monotonic()
        self._log.info("leader.acquired", lease=self._name)

    def _write(self, lease: Lease, event: str) -> None:
        started = self._clock.monotonic()
        try:
            self._lease = self._leases.replace(lease)
        except ConflictError:
            self._renewed_mono = None
            return
        if event == "acquired":
            self._log.info("leader.acquired", lease=self._name, transitions=lease.transitions)
        self._renewed_mono = started
