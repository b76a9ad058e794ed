"""The fake server's /v1/embeddings route, through the real openai client."""

from __future__ import annotations

import math

import openai

from tests.support.fake_embeddings import DIMS, embeddings_payload, hashed_vector
from tests.support.fake_openai_server import FakeOpenAIServer


def cosine(a: list[float], b: list[float]) -> float:
    return sum(x * y for x, y in zip(a, b, strict=True))


def test_embeddings_route_answers_stable_unit_vectors_and_is_recorded() -> None:
    texts = ["the asyncio event loop schedules tasks", "event loop tasks in asyncio", "baking sourdough bread"]
    with FakeOpenAIServer() as server:
        client = openai.OpenAI(base_url=server.base_url, api_key="test", max_retries=0)
        first = client.embeddings.create(model="fake-embed", input=texts)  # the client asks for base64
        again = client.embeddings.create(model="fake-embed", input=texts[0], encoding_format="float")
        records = server.requests
    vectors = [item.embedding for item in first.data]
    assert [len(v) for v in vectors] == [DIMS] * 3
    assert all(math.isclose(math.sqrt(sum(x * x for x in v)), 1.0, rel_tol=1e-5) for v in vectors)
    assert again.data[0].embedding == hashed_vector(texts[0].split())
    assert cosine(vectors[0], vectors[1]) > cosine(vectors[0], vectors[2])
    assert first.usage.prompt_tokens == sum(len(t) // 4 for t in texts)
    assert [(r.route, r.status, r.model) for r in records] == [("embeddings", 200, "fake-embed")] * 2


def test_token_id_inputs_and_bad_inputs() -> None:
    payload, tokens = embeddings_payload({"model": "m", "input": [[1, 2, 3], [4, 5]]})
    assert [item["embedding"] for item in payload["data"]] == [hashed_vector(["1", "2", "3"]), hashed_vector(["4", "5"])]
    assert tokens == 5
    with FakeOpenAIServer() as server:
        client = openai.OpenAI(base_url=server.base_url, api_key="test", max_retries=0)
        try:
            client.embeddings.create(model="m", input=[])
        except openai.BadRequestError as exc:
            assert "'input' must be" in str(exc)
        else:
            raise AssertionError("an empty input was accepted")
        assert server.requests == []
