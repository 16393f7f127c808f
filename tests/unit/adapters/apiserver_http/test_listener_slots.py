"""A listener's connection slots: its cap, each source address's share, the probe reserve."""

from __future__ import annotations

from brupop.adapters.apiserver_http.serving.slots import (
    RESERVE_PER_ADDRESS,
    ListenerLimits,
    ListenerSlots,
    Slot,
    source_address,
)

LIMITS = ListenerLimits(max_connections=4, per_address=2, probe_reserve=3)


def take(slots: ListenerSlots, address: str, count: int) -> list[Slot | None]:
    return [slots.take(address) for _ in range(count)]


def test_an_address_gets_its_share_and_no_more() -> None:
    slots = ListenerSlots(LIMITS)

    first = take(slots, "10.0.0.1", 3)

    assert [slot is not None for slot in first] == [True, True, False]
    assert slots.why_full("10.0.0.1") == "address"
    assert slots.take("10.0.0.2") is not None


def test_a_slot_given_back_once_is_free_again_however_often_released() -> None:
    slots = ListenerSlots(LIMITS)
    slot = slots.take("10.0.0.1")
    assert slot is not None and slots.take("10.0.0.1") is not None

    slot.release()
    slot.release()

    assert slots.open == 1
    assert slots.take("10.0.0.1") is not None
    assert slots.take("10.0.0.1") is None


def test_the_servers_own_host_is_not_counted_per_address() -> None:
    slots = ListenerSlots(LIMITS)

    held = take(slots, "127.0.0.1", 3) + take(slots, "::1", 1)

    assert all(slot is not None and not slot.reserved for slot in held)
    assert slots.take("10.0.0.1") is not None  # the listener is full: from the reserve


def test_a_full_listener_admits_reserve_connections_up_to_the_reserve() -> None:
    slots = ListenerSlots(LIMITS)
    take(slots, "10.0.0.1", 2)
    take(slots, "10.0.0.2", 2)

    reserve = take(slots, "10.0.0.3", RESERVE_PER_ADDRESS + 1) + take(slots, "10.0.0.4", 2)

    admitted = [slot for slot in reserve if slot is not None]
    assert all(slot.reserved for slot in admitted)
    assert len(admitted) == LIMITS.probe_reserve
    assert reserve[RESERVE_PER_ADDRESS] is None  # the address's share of the reserve
    assert slots.why_full("10.0.0.5") == "listener"


def test_an_address_at_its_share_gets_no_reserve_connection() -> None:
    slots = ListenerSlots(LIMITS)
    take(slots, "10.0.0.1", 2)
    take(slots, "10.0.0.2", 2)

    assert slots.take("10.0.0.1") is None


def test_a_reserve_slot_given_back_frees_the_reserve_not_the_listener() -> None:
    slots = ListenerSlots(LIMITS)
    take(slots, "10.0.0.1", 2)
    take(slots, "10.0.0.2", 2)
    reserved = slots.take("10.0.0.3")
    assert reserved is not None and reserved.reserved

    reserved.release()

    assert slots.open == 4
    next_one = slots.take("10.0.0.3")
    assert next_one is not None and next_one.reserved


def test_an_ipv4_peer_of_a_dual_stack_socket_counts_as_its_ipv4_address() -> None:
    assert source_address(("::ffff:10.1.2.3", 5000, 0, 0)) == "10.1.2.3"
    assert source_address(("::ffff:127.0.0.1", 5000, 0, 0)) == "127.0.0.1"
    assert source_address(("fd00::1", 5000, 0, 0)) == "fd00::1"
    assert source_address(None) == ""
