"""The one retry policy for outside HTTP services, against a real local OpenAI-compatible server."""

from __future__ import annotations

from datetime import UTC, datetime, timedelta
from email.utils import format_datetime

import httpx
import pytest

from papersift.retries import (
    BadReply,
    GaveUp,
    Refused,
    backoff_seconds,
    post_json,
    retry_after_seconds,
)
from tests.openai_server import Fault, OpenAIServer
from tests.upstream import closed_port


def vectors(response: httpx.Response) -> list[list[float]]:
    try:
        return [row["embedding"] for row in response.json()["data"]]
    except ValueError as exc:
        raise BadReply(str(exc)) from None


def test_retry_after_accepts_seconds_and_http_dates_and_is_capped() -> None:
    assert retry_after_seconds("7") == 7
    soon = format_datetime(datetime.now(UTC) + timedelta(seconds=30), usegmt=True)
    assert 25 <= retry_after_seconds(soon) <= 30
    past = format_datetime(datetime.now(UTC) - timedelta(hours=1), usegmt=True)
    assert retry_after_seconds(past) == 0
    assert retry_after_seconds("86400") == 60 and retry_after_seconds("86400", cap=300) == 300
    assert retry_after_seconds("soon") is None and retry_after_seconds(None) is None


def test_backoff_doubles_and_is_capped() -> None:
    assert [backoff_seconds(0.5, a) for a in range(4)] == [0.5, 1.0, 2.0, 4.0]
    assert backoff_seconds(2.0, 10) == 60 and backoff_seconds(-1.0, 0) == 0


def test_transient_failures_are_tried_again_until_an_answer() -> None:
    with OpenAIServer() as server, httpx.Client(timeout=0.5) as client:
        server.faults += [Fault(status=429, retry_after=0.01), Fault(status=503),
                          Fault(invalid_json=True), Fault(truncate=True), Fault(delay=1.0)]
        found = post_json(client, server.url + "/embeddings", {"model": "m", "input": ["a", "b"]},
                          vectors, attempts=6, backoff=0.01)
    assert len(found) == 2 and len(server.requests) == 6


def test_a_refusal_is_not_tried_again_and_says_why() -> None:
    with (OpenAIServer(api_key="right") as server, httpx.Client() as client,
          pytest.raises(Refused, match="HTTP 401: Incorrect API key") as refused):
        post_json(client, server.url + "/embeddings", {"model": "m", "input": ["a"]},
                  vectors, attempts=5, backoff=0.01, headers={"Authorization": "Bearer no"})
    assert refused.value.status == 401 and len(server.requests) == 1


def test_attempts_run_out_with_the_last_failure_named() -> None:
    with OpenAIServer() as server, httpx.Client() as client:
        server.faults += [Fault(status=500)] * 3
        with pytest.raises(GaveUp, match="gave up after 3 attempts: HTTP 500") as gave_up:
            post_json(client, server.url + "/embeddings", {"model": "m", "input": ["a"]},
                      vectors, attempts=3, backoff=0.01)
    assert gave_up.value.attempts == 3 and len(server.requests) == 3
    with httpx.Client() as client, pytest.raises(GaveUp, match="transport error: ConnectError"):
        post_json(client, f"http://127.0.0.1:{closed_port()}/v1/embeddings", {}, vectors,
                  attempts=2, backoff=0.01)
