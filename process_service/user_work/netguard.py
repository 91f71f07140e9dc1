"""Where `web_fetch` may connect: public addresses only (no loopback, private, link-local,
shared, multicast or reserved ones), unless a tenant admin names the host in
`work.fetch.allowHosts`. The check sits in the connection itself (an httpcore network
backend): every connection, the first and each redirect's, resolves the host, checks every
address the DNS answer holds, and connects to a checked address, so neither a redirect nor a
DNS answer that changes between check and connect can reach an address the check refused."""

from __future__ import annotations

import asyncio
import ipaddress
import socket
import typing

import httpcore
import httpx

IPAddress = ipaddress.IPv4Address | ipaddress.IPv6Address


class FetchRefused(Exception):
    """The URL names a place web_fetch does not go; the message says why."""


def is_public(ip: IPAddress) -> bool:
    if isinstance(ip, ipaddress.IPv6Address) and ip.ipv4_mapped is not None:
        return is_public(ip.ipv4_mapped)
    return ip.is_global and not ip.is_multicast


def allowed(host: str, port: int, allow: frozenset[str]) -> bool:
    name = host.lower().strip("[]")
    return name in allow or f"{name}:{port}" in allow or f"[{name}]:{port}" in allow


async def checked_addresses(host: str, port: int, allow: frozenset[str]) -> list[str]:
    """The addresses to connect to for host:port; FetchRefused when one is not public and the
    host is not allowed by name."""
    name = host.strip("[]")
    try:
        literal: IPAddress | None = ipaddress.ip_address(name)
    except ValueError:
        literal = None
    if literal is not None:
        addresses = [str(literal)]
    else:
        try:
            infos = await asyncio.get_running_loop().getaddrinfo(
                name, port, type=socket.SOCK_STREAM
            )
        except socket.gaierror as exc:
            raise FetchRefused(f"{name} does not resolve: {exc.strerror}") from exc
        addresses = list(dict.fromkeys(str(info[4][0]) for info in infos))
    if allowed(host, port, allow):
        return addresses
    for address in addresses:
        if not is_public(ipaddress.ip_address(address.split("%")[0])):
            raise FetchRefused(
                f"{name} is (or resolves to) {address}, a loopback, private or link-local "
                "address; web_fetch only reaches public addresses (a tenant admin may allow a "
                "host with the setting work.fetch.allowHosts)"
            )
    return addresses


class GuardedBackend(httpcore.AsyncNetworkBackend):
    def __init__(self, allow: frozenset[str]) -> None:
        self._allow = allow
        self._inner = httpcore.AnyIOBackend()

    async def connect_tcp(
        self,
        host: str,
        port: int,
        timeout: float | None = None,
        local_address: str | None = None,
        socket_options: typing.Iterable[httpcore.SOCKET_OPTION] | None = None,
    ) -> httpcore.AsyncNetworkStream:
        addresses = await checked_addresses(host, port, self._allow)
        failure: Exception | None = None
        for address in addresses:
            try:
                return await self._inner.connect_tcp(
                    address, port, timeout, local_address, socket_options
                )
            except (httpcore.ConnectError, httpcore.ConnectTimeout) as exc:
                failure = exc
        assert failure is not None  # checked_addresses returns at least one address
        raise failure

    async def connect_unix_socket(
        self,
        path: str,
        timeout: float | None = None,
        socket_options: typing.Iterable[httpcore.SOCKET_OPTION] | None = None,
    ) -> httpcore.AsyncNetworkStream:
        raise FetchRefused("web_fetch does not open local sockets")

    async def sleep(self, seconds: float) -> None:
        await self._inner.sleep(seconds)


def guarded_transport(allow: frozenset[str]) -> httpx.AsyncHTTPTransport:
    """httpx's transport with its connection pool on the guarded backend (httpx takes no
    backend argument, so the pool it built is replaced by the same pool on ours); never through
    a proxy from the environment, which would connect on our behalf unchecked."""
    transport = httpx.AsyncHTTPTransport(trust_env=False)
    transport._pool = httpcore.AsyncConnectionPool(
        ssl_context=httpx.create_ssl_context(trust_env=False),
        max_connections=4,
        network_backend=GuardedBackend(allow),
    )
    return transport
