"""Reading a response body with a bound: neither a 10 GB body nor a gzip bomb gets past it.

The body is streamed and decompressed here (gzip/deflate), never by httpx, so the cap
applies to decoded content; a declared Content-Length over the cap is refused before
any byte is read, and bytes that are not text are refused as soon as the first 8 KB
show it.
"""

from __future__ import annotations

import zlib
from collections.abc import AsyncIterator, Callable
from dataclasses import dataclass
from typing import Any

import httpx

from .extract import BINARY_SAMPLE, looks_binary
from .outcome import FetchRefused

__all__ = ["Body", "BoundedDecoder", "parse_content_type", "read_body"]


@dataclass(frozen=True)
class Body:
    """A downloaded body: where it ended up, its type and charset, its bytes, every address of every hop."""

    final_url: str
    mime: str
    charset: str | None
    data: bytes
    addresses: tuple[str, ...] = ()


class BoundedDecoder:
    """Content-Encoding decoder that never produces more than it is allowed to."""

    def __init__(self, encoding: str) -> None:
        names = [e.strip().lower() for e in encoding.split(",") if e.strip()]
        names = [n for n in names if n != "identity"]
        if len(names) > 1:
            raise FetchRefused("bad_encoding", encoding)
        self.kind = names[0] if names else "identity"
        if self.kind in ("gzip", "x-gzip"):
            self._z: Any = zlib.decompressobj(16 + zlib.MAX_WBITS)
        elif self.kind == "deflate":
            self._z = zlib.decompressobj()
            self._first = True
        elif self.kind == "identity":
            self._z = None
        else:
            raise FetchRefused("bad_encoding", self.kind)

    def feed(self, data: bytes, limit: int) -> bytes:
        """Decode ``data``; raise too_large if that would give more than ``limit`` bytes."""
        if self._z is None:
            if len(data) > limit:
                raise FetchRefused("too_large", "body exceeds the size cap")
            return data
        try:
            out = self._z.decompress(data, limit + 1)
        except zlib.error:
            if self.kind == "deflate" and self._first:  # some servers send raw deflate
                self._z = zlib.decompressobj(-zlib.MAX_WBITS)
                self._first = False
                return self.feed(data, limit)
            raise FetchRefused("decode_error", "corrupt compressed body") from None
        if self.kind == "deflate":
            self._first = False
        if len(out) > limit or self._z.unconsumed_tail:
            raise FetchRefused("too_large", "decompressed body exceeds the size cap")
        return out

    def flush(self, limit: int) -> bytes:
        if self._z is None:
            return b""
        try:
            out = self._z.flush()
        except zlib.error:
            raise FetchRefused("decode_error", "corrupt compressed body") from None
        if len(out) > limit:
            raise FetchRefused("too_large", "decompressed body exceeds the size cap")
        return out


def parse_content_type(value: str) -> tuple[str, str | None]:
    """(mime type in lower case, charset or None) of a Content-Type header."""
    mime, _, rest = value.partition(";")
    charset = None
    for param in rest.split(";"):
        name, _, val = param.partition("=")
        if name.strip().lower() == "charset":
            charset = val.strip().strip("\"'") or None
    return mime.strip().lower(), charset


async def _once(data: bytes) -> AsyncIterator[bytes]:
    yield data


async def read_body(
    response: httpx.Response,
    max_bytes: int,
    charset: str | None,
    *,
    check_binary: bool,
    on_chunk: Callable[[], None] | None = None,
) -> bytes:
    """The decoded body of a streamed ``response``, at most ``max_bytes``.

    Raises FetchRefused: ``too_large``, ``bad_encoding``, ``decode_error``, and
    ``binary_content`` when ``check_binary`` and the first bytes are not text.
    ``on_chunk`` is called after each chunk read (a caller's own deadline check).
    """
    declared = response.headers.get("content-length", "")
    if declared.isdigit() and int(declared) > max_bytes:
        raise FetchRefused("too_large", f"declared {declared} bytes")
    buf = bytearray()
    checked = not check_binary
    if response.is_stream_consumed:
        # A transport that hands over a body it already read and decoded (httpx.MockTransport).
        decoder = BoundedDecoder("identity")
        chunks: AsyncIterator[bytes] = _once(response.content)
    else:
        decoder = BoundedDecoder(response.headers.get("content-encoding", ""))
        chunks = response.aiter_raw()
    async for raw in chunks:
        buf += decoder.feed(raw, max_bytes - len(buf))
        if on_chunk is not None:
            on_chunk()
        if not checked and len(buf) >= BINARY_SAMPLE:
            checked = True
            if looks_binary(bytes(buf[:BINARY_SAMPLE]), charset):
                raise FetchRefused("binary_content")
    buf += decoder.flush(max_bytes - len(buf))
    if not checked and looks_binary(bytes(buf[:BINARY_SAMPLE]), charset):
        raise FetchRefused("binary_content")
    return bytes(buf)
