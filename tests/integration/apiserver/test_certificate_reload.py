"""A renewed serving certificate is used for new connections without restarting the server."""

from __future__ import annotations

import socket
import ssl

from cryptography import x509

from tests.integration.apiserver.conftest import Rig


def served_certificate(rig: Rig) -> x509.Certificate:
    context = ssl.create_default_context(cafile=str(rig.certs.ca_path))
    with (
        socket.create_connection(("127.0.0.1", rig.server.port), timeout=5) as raw,
        context.wrap_socket(raw, server_hostname="localhost") as tls,
    ):
        der = tls.getpeercert(binary_form=True)
    assert der is not None
    return x509.load_der_x509_certificate(der)


def test_a_renewed_certificate_is_served_without_a_restart(rig: Rig) -> None:
    first = served_certificate(rig)

    renewed = rig.certs.issue(common_name="brupop-apiserver-renewed")

    assert served_certificate(rig).serial_number == renewed.serial_number
    assert renewed.serial_number != first.serial_number
    assert rig.client("n1").get() is None  # the agent's client still trusts it (same CA)


def test_a_broken_renewal_keeps_the_previous_certificate(rig: Rig) -> None:
    first = served_certificate(rig)

    rig.certs.key_path.write_text("not a key")

    assert served_certificate(rig).serial_number == first.serial_number
