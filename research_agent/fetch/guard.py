"""The URL and address guard: which addresses research-agent may fetch from.

:func:`is_public_address` is False for every address that is not globally reachable
public unicast: loopback, private, carrier-grade NAT, link-local, multicast, reserved,
unspecified, documentation and deprecated ranges (site-local ``fec0::/10``, the 6to4
relay anycast). An IPv6 address that carries an IPv4 one (IPv4-mapped, 6to4, NAT64,
Teredo) is judged by that IPv4 address, so ``::ffff:127.0.0.1`` or ``64:ff9b::7f00:1``
cannot smuggle loopback past it.

:class:`AddressGuard` applies it on every way to a page: it resolves a URL's host
(once per host per run), refuses it unless every address is acceptable, and pins the
request to the checked addresses so DNS cannot change its answer between the check
and the connect; the fetcher asks it for every redirect hop, robots.txt included. A
cached page is served only when the guard would accept every address it was fetched
from (:meth:`AddressGuard.admits`), so the cache is no way around it.
"""

from __future__ import annotations

import asyncio
import ipaddress
import logging
import socket
from collections.abc import Awaitable, Callable, Iterable, Sequence
from dataclasses import dataclass, field
from typing import Any

import httpx

from .outcome import FetchRefused

__all__ = ["is_public_address", "AddressGuard", "Pinned", "Resolver", "system_resolve"]

log = logging.getLogger(__name__)

Resolver = Callable[[str], Awaitable[Sequence[str]]]
"""``async (host) -> IP address strings``: the DNS seam. Tests map names to addresses."""

_PINNED_TARGETS = 4  # addresses tried in turn when the first refuses the connection

# Special ranges the ipaddress module (3.11) calls global: deprecated site-local IPv6
# (RFC 3879), the deprecated 6to4 relay anycast (RFC 7526), IPv6 documentation (RFC 9637).
_NOT_PUBLIC = tuple(
    ipaddress.ip_network(net) for net in ("fec0::/10", "192.88.99.0/24", "3fff::/20", "2001:db8::/32")
)
_NAT64 = ipaddress.ip_network("64:ff9b::/96")  # RFC 6052: the IPv4 address is in the last 32 bits


def _embedded_ipv4(ip: ipaddress.IPv6Address) -> ipaddress.IPv4Address | None:
    """The IPv4 address an IPv6 address carries: mapped, 6to4, NAT64 or Teredo (its client)."""
    if ip.ipv4_mapped is not None:
        return ip.ipv4_mapped
    if ip.sixtofour is not None:
        return ip.sixtofour
    if ip in _NAT64:
        return ipaddress.IPv4Address(int(ip) & 0xFFFFFFFF)
    if ip.teredo is not None:
        return ip.teredo[1]
    return None


def is_public_address(address: str) -> bool:
    """False for loopback, private, link-local, multicast, reserved, unspecified,
    deprecated and other non-global addresses. An IPv6 address that carries an IPv4
    one (mapped, 6to4, NAT64, Teredo) is judged by that IPv4 address."""
    try:
        ip: ipaddress.IPv4Address | ipaddress.IPv6Address = ipaddress.ip_address(address.split("%", 1)[0])
    except ValueError:
        return False
    if isinstance(ip, ipaddress.IPv6Address):
        ip = _embedded_ipv4(ip) or ip
    if any(ip in net for net in _NOT_PUBLIC if net.version == ip.version):
        return False
    if (
        ip.is_loopback
        or ip.is_private
        or ip.is_link_local
        or ip.is_multicast
        or ip.is_reserved
        or ip.is_unspecified
    ):
        return False
    return ip.is_global


def is_ip(host: str) -> bool:
    """Whether ``host`` is an IP address literal (no brackets)."""
    try:
        ipaddress.ip_address(host)
    except ValueError:
        return False
    return True


async def system_resolve(host: str) -> list[str]:
    """The system resolver's addresses for ``host``, in its order, without duplicates."""
    loop = asyncio.get_running_loop()
    infos = await loop.getaddrinfo(host, None, type=socket.SOCK_STREAM)
    return list(dict.fromkeys(str(info[4][0]) for info in infos))


@dataclass(frozen=True)
class Pinned:
    """A request pinned to checked addresses.

    ``targets`` are the URL with its host replaced by each checked address (to try in
    turn); ``headers`` keep the real ``Host`` and ``extensions`` the TLS server name.
    HTTPS requests carry ``Connection: close`` so a pooled connection opened for one
    name is never reused for another name served from the same address.
    """

    targets: tuple[httpx.URL, ...]
    headers: dict[str, str] = field(default_factory=dict)
    extensions: dict[str, Any] = field(default_factory=dict)
    addresses: tuple[str, ...] = ()


class AddressGuard:
    """Resolves and checks hosts for one Fetcher; remembers each host's answer for the run."""

    def __init__(self, *, allow_private: bool = False, resolver: Resolver | None = None) -> None:
        self.allow_private = allow_private
        self._resolver: Resolver = resolver or system_resolve
        self._dns: dict[str, tuple[str, ...]] = {}

    def accepts(self, addresses: Iterable[str]) -> bool:
        """Whether a fetch from every one of ``addresses`` is allowed."""
        return self.allow_private or all(is_public_address(a) for a in addresses)

    def admits(self, url: str, addresses: Sequence[str]) -> bool:
        """Whether a cached page of ``url`` fetched from ``addresses`` may be served.

        A page without addresses has no evidence of where it came from: never trusted.
        A page cached by a run that allowed private addresses is a miss for one that
        does not; the live fetch that follows applies the guard to today's DNS answer.
        """
        if not addresses:
            return False
        if not self.accepts(addresses):
            log.info("cached page %s came from a private address; not served without allow_private", url)
            return False
        return True

    async def resolve(self, host: str) -> tuple[str, ...]:
        """The addresses of ``host`` (itself when it is an IP); raises FetchRefused("dns_error")."""
        if is_ip(host):
            return (host,)
        known = self._dns.get(host)
        if known is not None:
            return known
        try:
            addresses = tuple(await self._resolver(host))
        except (OSError, UnicodeError) as exc:
            raise FetchRefused("dns_error", f"{host}: {exc}") from None
        if not addresses:
            raise FetchRefused("dns_error", f"{host}: no address")
        self._dns[host] = addresses
        return addresses

    async def pin(self, url: str) -> Pinned:
        """Resolve and check the URL's host and pin the request to the checked addresses.

        Raises FetchRefused with ``bad_url``, ``dns_error`` or ``private_address``.
        """
        try:
            parsed = httpx.URL(url)
        except (httpx.InvalidURL, ValueError) as exc:
            raise FetchRefused("bad_url", str(exc)) from None
        host = parsed.raw_host.decode("ascii").strip("[]").lower()
        if not host:
            raise FetchRefused("bad_url", url)
        addresses = await self.resolve(host)
        if not self.allow_private:
            for address in addresses:
                if not is_public_address(address):
                    raise FetchRefused("private_address", f"{host} -> {address}")
        if is_ip(host):
            return Pinned((parsed,), addresses=addresses)
        headers = {"Host": parsed.netloc.decode("ascii")}
        extensions: dict[str, Any] = {}
        if parsed.scheme == "https":
            extensions["sni_hostname"] = host
            headers["Connection"] = "close"
        targets = tuple(parsed.copy_with(host=a) for a in addresses[:_PINNED_TARGETS])
        return Pinned(targets, headers, extensions, addresses)
