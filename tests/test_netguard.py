"""web_fetch's address rule (process_service/user_work/netguard.py), address by address: only
public unicast addresses pass, whatever form the address takes; a host the tenant allows passes
by its name (or name:port), and a name passes only when every address of its answer does."""

from __future__ import annotations

import ipaddress

import pytest

from process_service.user_work.netguard import FetchRefused, checked_addresses, is_public


@pytest.mark.parametrize(
    "address",
    [
        "127.0.0.1",
        "127.8.9.10",
        "10.0.0.1",
        "172.16.5.4",
        "192.168.1.1",
        "169.254.169.254",
        "100.64.0.1",  # carrier-grade NAT (shared)
        "0.0.0.0",
        "224.0.0.1",
        "255.255.255.255",
        "::1",
        "::",
        "fe80::1",
        "fc00::1",
        "::ffff:127.0.0.1",  # IPv4-mapped loopback
        "::ffff:10.0.0.1",
    ],
)
def test_private_and_special_addresses_are_not_public(address: str) -> None:
    assert not is_public(ipaddress.ip_address(address))


@pytest.mark.parametrize("address", ["93.184.216.34", "1.1.1.1", "2606:4700:4700::1111"])
def test_public_addresses_are(address: str) -> None:
    assert is_public(ipaddress.ip_address(address))


async def test_names_and_literals_are_checked_and_the_allow_list_goes_by_name() -> None:
    with pytest.raises(FetchRefused, match=r"127\.0\.0\.1"):
        await checked_addresses("127.0.0.1", 80, frozenset())
    with pytest.raises(FetchRefused, match="loopback"):
        await checked_addresses("localhost", 80, frozenset({"127.0.0.1"}))
    with pytest.raises(FetchRefused):
        await checked_addresses("[::1]", 80, frozenset({"127.0.0.1:80"}))
    assert await checked_addresses("127.0.0.1", 80, frozenset({"127.0.0.1:80"})) == ["127.0.0.1"]
    assert await checked_addresses("127.0.0.1", 81, frozenset({"127.0.0.1"})) == ["127.0.0.1"]
    with pytest.raises(FetchRefused):
        await checked_addresses("127.0.0.1", 81, frozenset({"127.0.0.1:80"}))
    assert "127.0.0.1" in await checked_addresses("localhost", 80, frozenset({"localhost"}))
    with pytest.raises(FetchRefused, match="does not resolve"):
        await checked_addresses("no-such-host.invalid", 80, frozenset())
