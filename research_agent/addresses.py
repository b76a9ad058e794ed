"""Which IP addresses research-agent may fetch from: the address guard's judgement.

:func:`is_public_address` is False for every address that is not globally reachable
public unicast: loopback, private, carrier-grade NAT, link-local, multicast, reserved,
unspecified, documentation and deprecated ranges (site-local ``fec0::/10``, the 6to4
relay anycast). An IPv6 address that carries an IPv4 one (IPv4-mapped, 6to4, NAT64,
Teredo) is judged by that IPv4 address, so ``::ffff:127.0.0.1`` or ``64:ff9b::7f00:1``
cannot smuggle loopback past it. The fetcher applies it to every hop and to cached pages.
"""

from __future__ import annotations

import ipaddress

__all__ = ["is_public_address"]

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
