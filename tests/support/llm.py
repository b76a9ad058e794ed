"""A scripted OpenAI-compatible endpoint behind an httpx.MockTransport, and the real model client over it."""

from __future__ import annotations

import json
import random
from collections.abc import Callable
from typing import Any

import httpx

from research_agent.llm import OpenAIChatModel
from research_agent.llm.prices import PriceTable

Reply = httpx.Response | Exception | Callable[[httpx.Request, dict[str, Any]], httpx.Response]


def completion(content: str, *, finish: str = "stop", usage: dict[str, int] | None = None) -> httpx.Response:
    body: dict[str, Any] = {
        "id": "chatcmpl-1",
        "object": "chat.completion",
        "created": 0,
        "model": "whatever",
        "choices": [
            {"index": 0, "message": {"role": "assistant", "content": content}, "finish_reason": finish}
        ],
    }
    if usage is not None:
        body["usage"] = {**usage, "total_tokens": sum(usage.values())}
    return httpx.Response(200, json=body)


class Endpoint:
    """A scripted endpoint: replies in order; the last one repeats. Records every request."""

    def __init__(self, *replies: Reply) -> None:
        self.replies = list(replies)
        self.bodies: list[dict[str, Any]] = []
        self.requests: list[httpx.Request] = []

    def __call__(self, request: httpx.Request) -> httpx.Response:
        body = json.loads(request.content)
        self.bodies.append(body)
        self.requests.append(request)
        reply = self.replies.pop(0) if len(self.replies) > 1 else self.replies[0]
        if isinstance(reply, Exception):
            raise reply
        if callable(reply):
            return reply(request, body)
        return reply

    def formats(self) -> list[str | None]:
        return [(b.get("response_format") or {}).get("type") for b in self.bodies]


class Sleeps:
    def __init__(self) -> None:
        self.calls: list[float] = []

    async def __call__(self, seconds: float) -> None:
        self.calls.append(seconds)


def make_model(endpoint: Any, **kwargs: Any) -> tuple[OpenAIChatModel, Sleeps]:
    sleeps = Sleeps()
    options: dict[str, Any] = {
        "model": "main-model",
        "fast_model": "fast-model",
        "api_key": "sk-test",
        "base_url": "http://llm.test/v1",
        "timeout": 5.0,
        "max_retries": 3,
        "concurrency": 4,
        "prices": PriceTable.default(),
        "http_client": httpx.AsyncClient(transport=httpx.MockTransport(endpoint)),
        "sleep": sleeps,
        "rng": random.Random(1),
        "form_cache": {},
    }
    options.update(kwargs)
    return OpenAIChatModel(**options), sleeps
