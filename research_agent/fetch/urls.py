"""URL identity: normalised URLs and registrable domains.

``normalize_url`` gives two spellings of one page the same key (scheme and host case,
default ports, fragments, tracking parameters, parameter order, trailing slash).
``registrable_domain`` tells which *site* a URL belongs to, from the public-suffix list
bundled with the ``publicsuffixlist`` package (read from the installed package, never
downloaded): ``www.x.com`` and ``blog.x.com`` are both ``x.com``, ``a.x.co.uk`` is
``x.co.uk``. IP addresses and single-label hosts such as ``localhost`` are returned as-is.
"""

from __future__ import annotations

import contextlib
import functools
import ipaddress
import re
from typing import TYPE_CHECKING
from urllib.parse import parse_qsl, quote, urlencode, urlsplit, urlunsplit

if TYPE_CHECKING:
    from publicsuffixlist import PublicSuffixList

__all__ = ["normalize_url", "registrable_domain", "is_web_url", "url_host", "TRACKING_PARAMS"]

# Query parameters that only say where a click came from; they never change the page.
TRACKING_PARAMS = frozenset(
    {
        "fbclid", "gclid", "gclsrc", "dclid", "gbraid", "wbraid", "msclkid", "yclid", "twclid",
        "ttclid", "li_fat_id", "igshid", "mc_cid", "mc_eid", "_ga", "_gl", "_hsenc", "_hsmi",
        "__hstc", "__hssc", "__hsfp", "hsctatracking", "mkt_tok", "vero_id", "vero_conv",
        "oly_anon_id", "oly_enc_id", "rb_clickid", "s_cid", "wt.mc_id", "ref_src", "ref_url",
        "cmpid", "spm", "scid", "srsltid",
    }
)  # fmt: skip
_TRACKING_PREFIXES = ("utm_", "pk_", "mtm_", "matomo_", "hsa_")
_DEFAULT_PORTS = {"http": 80, "https": 443}
_PERCENT = re.compile(r"%[0-9a-fA-F]{2}")
# Characters a path may carry unescaped (RFC 3986 pchar plus "/"); '%' kept for escapes.
_PATH_SAFE = "/:@!$&'()*+,;=-._~%"


def _is_tracking(name: str) -> bool:
    low = name.lower()
    return low in TRACKING_PARAMS or low.startswith(_TRACKING_PREFIXES)


def _normalize_host(host: str) -> str:
    host = host.strip().rstrip(".").lower()
    if not host:
        return ""
    try:
        host.encode("ascii")
    except UnicodeEncodeError:
        # not IDNA-encodable: keep the lowercase Unicode form as its identity
        with contextlib.suppress(UnicodeError):
            host = host.encode("idna").decode("ascii")
    return host


def normalize_url(url: str) -> str:
    """Return the canonical spelling of ``url`` used to recognise one page.

    Lowercases scheme and host (IDN hosts become punycode), drops default ports,
    user info, the fragment and tracking parameters (``utm_*``, ``fbclid``, ``gclid``
    ...), sorts the remaining query parameters and removes a trailing slash (the root
    path stays ``/``). A string that is not an absolute http(s) URL is only stripped.
    """
    text = (url or "").strip()
    try:
        parts = urlsplit(text)
        port = parts.port
    except ValueError:
        return text
    scheme = parts.scheme.lower()
    if scheme not in _DEFAULT_PORTS or not parts.hostname:
        return text
    host = _normalize_host(parts.hostname)
    if ":" in host:  # IPv6 literal
        host = f"[{host}]"
    netloc = host if port in (None, _DEFAULT_PORTS[scheme]) else f"{host}:{port}"
    path = quote(parts.path, safe=_PATH_SAFE)
    path = _PERCENT.sub(lambda m: m.group(0).upper(), path)
    path = re.sub(r"/{2,}", "/", path).rstrip("/") or "/"
    params = [(k, v) for k, v in parse_qsl(parts.query, keep_blank_values=True) if not _is_tracking(k)]
    query = urlencode(sorted(params))
    return urlunsplit((scheme, netloc, path, query, ""))


def is_web_url(url: str) -> bool:
    """True when ``url`` is an absolute http(s) URL with a usable host."""
    try:
        parts = urlsplit((url or "").strip())
        parts.port  # noqa: B018 - raises ValueError for a malformed port
    except ValueError:
        return False
    host = parts.hostname or ""
    if parts.scheme.lower() not in _DEFAULT_PORTS or not host:
        return False
    return not (any(c.isspace() for c in host) or ".." in host)


def url_host(url_or_host: str) -> str:
    """The lowercase host of a URL (or of a bare ``host[:port]``), without port or brackets."""
    text = (url_or_host or "").strip()
    if "://" not in text:
        text = "//" + text
    try:
        host = urlsplit(text).hostname or ""
    except ValueError:
        return ""
    return _normalize_host(host)


@functools.lru_cache(maxsize=1)
def _psl() -> PublicSuffixList:
    # Imported lazily: loading the list takes a few milliseconds. PublicSuffixList()
    # reads the copy shipped inside the package; it has no network code path.
    from publicsuffixlist import PublicSuffixList

    return PublicSuffixList()


@functools.lru_cache(maxsize=4096)
def _registrable(host: str) -> str:
    try:
        ipaddress.ip_address(host)
        return host
    except ValueError:
        pass
    if "." not in host:
        return host  # localhost, intranet names
    return _psl().privatesuffix(host) or host


def registrable_domain(url_or_host: str) -> str:
    """The registrable domain (eTLD+1) of a URL or host name.

    ``https://www.x.com/a`` and ``blog.x.com`` give ``x.com``; ``news.bbc.co.uk`` gives
    ``bbc.co.uk``. IP addresses, ``localhost`` and hosts that are themselves a public
    suffix are returned unchanged (lowercase). An empty string gives ``""``.
    """
    host = url_host(url_or_host)
    return _registrable(host) if host else ""
