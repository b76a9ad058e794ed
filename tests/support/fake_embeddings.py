"""Deterministic answers for the fake server's ``/v1/embeddings`` route.

Tools that rank text by embeddings (GPT Researcher, for one) need the endpoint to answer;
the vectors only have to be stable and to place texts that share words near each other.
Each text becomes a hashed bag of words: every word adds 1 to one of ``dims`` buckets
(chosen by a stable hash), and the vector is scaled to unit length. Inputs given as token
ids (lists of ints, as tiktoken-aware clients send) are treated as words too.
"""

from __future__ import annotations

import base64
import functools
import hashlib
import math
import re
import struct
from collections import Counter
from typing import Any

__all__ = ["DIMS", "embeddings_payload", "hashed_vector"]

DIMS = 64
_WORD = re.compile(r"[a-z0-9]+")


@functools.lru_cache(maxsize=65536)  # a batch of a thousand chunks repeats most of its words
def _bucket(word: str, dims: int) -> int:
    return int.from_bytes(hashlib.blake2b(word.encode(), digest_size=4).digest(), "little") % dims


def hashed_vector(words: list[str], dims: int = DIMS) -> list[float]:
    """A unit vector: ``words`` hashed into ``dims`` buckets (the zero vector's stand-in is e0)."""
    counts = [0.0] * dims
    for word, times in Counter(words).items():
        counts[_bucket(word, dims)] += times
    norm = math.sqrt(sum(c * c for c in counts))
    if norm == 0.0:
        return [1.0] + [0.0] * (dims - 1)
    return [c / norm for c in counts]


def _words(item: Any) -> list[str]:
    if isinstance(item, str):
        return _WORD.findall(item.lower())
    if isinstance(item, list):
        return [str(token) for token in item]
    raise ValueError("each input must be a string or a list of token ids")


def _tokens(item: Any) -> int:
    """A string's tokens as the benchmarks count them (characters // 4); token ids count one each."""
    return len(item) // 4 if isinstance(item, str) else len(item)


def _inputs(body: dict[str, Any]) -> list[Any]:
    raw = body.get("input")
    if isinstance(raw, str) or (isinstance(raw, list) and raw and isinstance(raw[0], int)):
        return [raw]  # one string, or one text as token ids
    if isinstance(raw, list) and raw:
        return raw
    raise ValueError("'input' must be a non-empty string or list")


def _encoded(vector: list[float], encoding: str | None) -> list[float] | str:
    if encoding == "base64":  # what the openai client asks for by default: little-endian float32
        return base64.b64encode(struct.pack(f"<{len(vector)}f", *vector)).decode("ascii")
    return vector


def embeddings_payload(body: dict[str, Any], dims: int = DIMS) -> tuple[dict[str, Any], int]:
    """The OpenAI-shaped answer to an embeddings request, and its input tokens (characters // 4).

    Raises ValueError on a request without usable ``input``.
    """
    raw = _inputs(body)
    encoding = body.get("encoding_format")
    data = [
        {"object": "embedding", "index": i, "embedding": _encoded(hashed_vector(_words(item), dims), encoding)}
        for i, item in enumerate(raw)
    ]
    tokens = sum(_tokens(item) for item in raw)
    payload = {
        "object": "list",
        "data": data,
        "model": str(body.get("model", "")),
        "usage": {"prompt_tokens": tokens, "total_tokens": tokens},
    }
    return payload, tokens
