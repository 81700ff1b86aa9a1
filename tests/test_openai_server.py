"""The local OpenAI-compatible server itself answers in the wire format and serves its faults."""

from __future__ import annotations

import httpx

from tests.openai_server import Fault, OpenAIServer


def test_chat_reply_has_the_upstream_shape() -> None:
    with OpenAIServer() as server:
        server.chat_handler = lambda request: "hello " + request["messages"][-1]["content"]
        reply = httpx.post(f"{server.url}/chat/completions",
                           json={"model": "m", "messages": [{"role": "user", "content": "there"}]})
    body = reply.json()
    assert reply.status_code == 200
    assert body["object"] == "chat.completion"
    assert body["choices"][0]["message"]["content"] == "hello there"
    assert body["usage"]["total_tokens"] == body["usage"]["prompt_tokens"] + 2


def test_faults_are_served_in_order_then_normal_replies() -> None:
    with OpenAIServer() as server:
        server.faults += [Fault(status=429, retry_after=2), Fault(invalid_json=True)]
        first = httpx.post(f"{server.url}/embeddings", json={"model": "e", "input": ["a"]})
        second = httpx.post(f"{server.url}/embeddings", json={"model": "e", "input": ["a"]})
        third = httpx.post(f"{server.url}/embeddings", json={"model": "e", "input": ["a", "b"]})
    assert first.status_code == 429 and first.headers["Retry-After"] == "2"
    assert first.json()["error"]["code"] == "rate_limit_exceeded"
    assert second.status_code == 200 and second.text.endswith("[")
    assert [d["index"] for d in third.json()["data"]] == [0, 1]
    assert len(server.requests) == 3
