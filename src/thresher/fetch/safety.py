"""Which addresses a fetch may connect to, and a resolver that connects only to those it checked.

By default every target must be a globally routable unicast address: loopback, private, link-local,
multicast, reserved, unspecified and shared (CGNAT) ranges are refused, for IPv4 and IPv6, and an
IPv6 address that embeds an IPv4 one (IPv4-mapped `::ffff:a.b.c.d`, IPv4-compatible, NAT64
`64:ff9b::/96`, 6to4, Teredo) is judged by the IPv4 address it reaches. The check runs on the
addresses DNS returned, and the connection is made to exactly those addresses (no second lookup
an attacker's DNS could answer differently), for the first request and for every redirect.
"""

from __future__ import annotations

import asyncio
import ipaddress
import socket
from collections import OrderedDict
from collections.abc import Awaitable, Callable
from typing import Any

from thresher.core.errors import ThresherError

IPAddress = ipaddress.IPv4Address | ipaddress.IPv6Address
# A resolver: (host, port) -> the IP addresses (as text) the host name resolves to.
Resolve = Callable[[str, int], Awaitable[list[str]]]

_NAT64 = ipaddress.IPv6Network("64:ff9b::/96")
_SHARED = ipaddress.IPv4Network("100.64.0.0/10")


class TargetRefused(ThresherError):
    """A URL's host resolves only to addresses the safety policy refuses."""

    def __init__(self, host: str, reason: str, address: str = "") -> None:
        super().__init__(f"{host}: refused, {reason} address {address}".rstrip())
        self.host = host
        self.reason = reason
        self.address = address


class ResolveFailed(ThresherError):
    """DNS gave no address for a host."""


def embedded_ipv4(addr: ipaddress.IPv6Address) -> ipaddress.IPv4Address | None:
    """The IPv4 address an IPv6 address forwards to, if it is one of the embedding forms."""
    if addr.ipv4_mapped is not None:
        return addr.ipv4_mapped
    if addr.sixtofour is not None:
        return addr.sixtofour
    if addr.teredo is not None:
        return addr.teredo[1]
    if addr in _NAT64:
        return ipaddress.IPv4Address(int(addr) & 0xFFFFFFFF)
    if int(addr) >> 32 == 0 and int(addr) > 1:  # deprecated IPv4-compatible ::a.b.c.d
        return ipaddress.IPv4Address(int(addr))
    return None


def refusal_reason(address: str | IPAddress) -> str | None:
    """Why an address is no public target (loopback, private, ...), or None when it is one."""
    addr = ipaddress.ip_address(address.split("%", 1)[0] if isinstance(address, str) else address)
    if isinstance(addr, ipaddress.IPv6Address):
        inner = embedded_ipv4(addr)
        if inner is not None:
            return refusal_reason(inner)
    if addr.is_unspecified:
        return "unspecified"
    if addr.is_loopback:
        return "loopback"
    if addr.is_link_local:
        return "link_local"
    if addr.is_multicast:
        return "multicast"
    if isinstance(addr, ipaddress.IPv4Address) and addr in _SHARED:
        return "shared"
    if addr.is_private:
        return "private"
    if addr.is_reserved or not addr.is_global:
        return "reserved"
    return None


def literal_address(host: str) -> str | None:
    """The address of a host that is an IP literal (`127.0.0.1`, `[::1]`), else None."""
    if ":" not in host and not host.replace(".", "").isdigit():
        return None  # a name (checked before every request: skip the parse and its exception)
    try:
        return str(ipaddress.ip_address(host[1:-1] if host.startswith("[") else host))
    except ValueError:
        return None


async def system_resolve(host: str, port: int) -> list[str]:
    """The operating system's resolver (getaddrinfo), run off the event loop."""
    infos = await asyncio.get_running_loop().getaddrinfo(host, port, type=socket.SOCK_STREAM)
    return [str(info[4][0]) for info in infos]


class PinnedResolver:
    """Resolves a host once, keeps only the addresses the policy allows, and hands exactly those to
    the HTTP client. `check(host, port)` is called before every request (first hop and redirects);
    the client's own lookup (`resolve`) returns the same checked list, so the address connected to
    is an address that was checked. A small LRU keeps hosts in use without growing with the list."""

    def __init__(
        self, resolve: Resolve | None = None, allow_private: bool = False, max_hosts: int = 4096,
        allow_networks: tuple[str, ...] = (),
    ) -> None:
        self._resolve = resolve or system_resolve
        self.allow_private = allow_private
        self._exempt = tuple(ipaddress.ip_network(n, strict=False) for n in allow_networks)
        self._max_hosts = max_hosts
        self._pinned: OrderedDict[tuple[str, int], list[str]] = OrderedDict()
        self.refused = 0

    def _allowed(self, host: str, addresses: list[str]) -> list[str]:
        if self.allow_private:
            return addresses
        allowed = [a for a in addresses if refusal_reason(a) is None or self._exempted(a)]
        if not allowed:
            self.refused += 1
            first = addresses[0]
            raise TargetRefused(host, refusal_reason(first) or "reserved", first)
        return allowed

    def _exempted(self, address: str) -> bool:
        if not self._exempt:
            return False
        addr = ipaddress.ip_address(address.split("%", 1)[0])
        return any(addr.version == net.version and addr in net for net in self._exempt)

    def pinned(self, host: str, port: int) -> list[str]:
        """The checked addresses of a host in use (for WARC-IP-Address), empty if not pinned."""
        literal = literal_address(host)
        return [literal] if literal else self._pinned.get((host, port), [])

    async def check(self, host: str, port: int) -> list[str]:
        """The addresses a request to host:port may connect to; raises TargetRefused or ResolveFailed."""
        literal = literal_address(host)
        if literal is not None:
            return self._allowed(host, [literal])
        key = (host, port)
        pinned = self._pinned.get(key)
        if pinned is not None:
            self._pinned.move_to_end(key)
            return pinned
        try:
            addresses = await self._resolve(host, port)
        except (OSError, UnicodeError) as exc:
            raise ResolveFailed(f"{host}: {exc}") from exc
        if not addresses:
            raise ResolveFailed(f"{host}: no address")
        allowed = self._allowed(host, addresses)
        self._pinned[key] = allowed
        if len(self._pinned) > self._max_hosts:
            self._pinned.popitem(last=False)
        return allowed

    def for_aiohttp(self) -> Any:
        """An aiohttp resolver answering from `check` (aiohttp resolves names only; IP literals are
        checked by `check` before the request is made)."""
        from aiohttp.abc import AbstractResolver

        outer = self

        class _Resolver(AbstractResolver):
            async def resolve(
                self, host: str, port: int = 0, family: socket.AddressFamily = socket.AF_INET
            ) -> list[Any]:
                try:
                    addresses = await outer.check(host, port)
                except (TargetRefused, ResolveFailed) as exc:
                    raise OSError(str(exc)) from exc
                return [
                    {
                        "hostname": host, "host": a, "port": port, "proto": 0, "flags": socket.AI_NUMERICHOST,
                        "family": socket.AF_INET6 if ":" in a else socket.AF_INET,
                    }
                    for a in addresses
                ]

            async def close(self) -> None:
                return None

        return _Resolver()


def static_resolver(table: dict[str, str | list[str]]) -> Resolve:
    """A resolver from a fixed table (tests and benchmarks: virtual hosts on loopback); a name not in
    the table does not resolve."""

    async def resolve(host: str, port: int) -> list[str]:
        value = table.get(host)
        if value is None:
            raise socket.gaierror(socket.EAI_NONAME, "Name or service not known")
        return [value] if isinstance(value, str) else list(value)

    return resolve
