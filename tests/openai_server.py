"""A real HTTP server on 127.0.0.1 that speaks the OpenAI-compatible wire format, with injectable faults.

Usage:
    with OpenAIServer() as server:
        server.chat_handler = lambda request: '{"tldr": "...", "blurb": "..."}'
        server.faults.append(Fault(status=429, retry_after=0.1))
        client code talks to server.url  (e.g. http://127.0.0.1:PORT/v1)

`chat_handler(request_json) -> str` gives the assistant message content of a normal reply;
`embeddings_handler(texts, model) -> list[list[float]]` gives vectors. Faults are consumed one
per request, before normal replies. Every request is logged in `requests`.
"""

from __future__ import annotations

import hashlib
import json
import threading
import time
from collections.abc import Callable
from dataclasses import dataclass
from http.server import BaseHTTPRequestHandler, ThreadingHTTPServer
from typing import Any


@dataclass
class Fault:
    """One misbehaviour, served instead of a normal reply.

    status: an HTTP error status with an OpenAI-style error body (429, 500, ...).
    retry_after: seconds sent as the Retry-After header.
    delay: seconds to wait before answering (longer than the client's timeout = a timeout).
    invalid_json: answer 200 with a body that is not JSON.
    truncate: answer 200 but close the connection halfway through the body.
    content: answer 200 normally but with this assistant content (e.g. a first-person blurb).
    """

    status: int | None = None
    retry_after: float | None = None
    delay: float = 0.0
    invalid_json: bool = False
    truncate: bool = False
    content: str | None = None


_ERRORS = {
    429: ("Rate limit reached for requests per min (RPM). Please try again in 1s.", "requests",
          "rate_limit_exceeded"),
    400: ("Unsupported parameter.", "invalid_request_error", "unsupported_parameter"),
    401: ("Incorrect API key provided.", "invalid_request_error", "invalid_api_key"),
}


def hash_embedding(text: str, dim: int = 8) -> list[float]:
    """A deterministic unit vector for a text (the default embeddings handler)."""
    digest = hashlib.sha256(text.encode("utf-8")).digest()
    values = [b / 255.0 - 0.5 for b in digest[:dim]]
    norm = sum(v * v for v in values) ** 0.5 or 1.0
    return [v / norm for v in values]


class OpenAIServer:
    """POST /v1/chat/completions and /v1/embeddings on a random loopback port."""

    def __init__(self, api_key: str | None = None) -> None:
        self.api_key = api_key
        self.chat_handler: Callable[[dict[str, Any]], str] = lambda request: "OK"
        self.embeddings_handler: Callable[[list[str], str], list[list[float]]] = (
            lambda texts, model: [hash_embedding(t) for t in texts]
        )
        self.faults: list[Fault] = []
        self.requests: list[dict[str, Any]] = []
        self._lock = threading.Lock()
        self._httpd = ThreadingHTTPServer(("127.0.0.1", 0), self._handler_class())
        self._httpd.daemon_threads = True
        self._thread = threading.Thread(target=self._httpd.serve_forever, daemon=True)

    @property
    def url(self) -> str:
        return f"http://127.0.0.1:{self._httpd.server_address[1]}/v1"

    def __enter__(self) -> OpenAIServer:
        self._thread.start()
        return self

    def __exit__(self, *exc: object) -> None:
        self._httpd.shutdown()
        self._httpd.server_close()

    def _next_fault(self) -> Fault | None:
        with self._lock:
            return self.faults.pop(0) if self.faults else None

    def _handler_class(self) -> type[BaseHTTPRequestHandler]:
        server = self

        class Handler(BaseHTTPRequestHandler):
            protocol_version = "HTTP/1.1"

            def log_message(self, *args: object) -> None:
                pass

            def _send(self, status: int, body: bytes, headers: dict[str, str] | None = None,
                      truncate: bool = False) -> None:
                self.send_response(status)
                self.send_header("Content-Type", "application/json")
                self.send_header("Content-Length", str(len(body)))
                for name, value in (headers or {}).items():
                    self.send_header(name, value)
                self.end_headers()
                if truncate:
                    self.wfile.write(body[: len(body) // 2])
                    self.wfile.flush()
                    self.close_connection = True
                    return
                self.wfile.write(body)

            def _error(self, status: int, headers: dict[str, str] | None = None) -> None:
                message, kind, code = _ERRORS.get(
                    status, ("The server had an error while processing your request.",
                             "server_error", None))
                body = {"error": {"message": message, "type": kind, "param": None, "code": code}}
                self._send(status, json.dumps(body).encode(), headers)

            def do_POST(self) -> None:  # noqa: N802 (http.server's naming)
                length = int(self.headers.get("Content-Length") or 0)
                raw = self.rfile.read(length)
                try:
                    payload = json.loads(raw or b"{}")
                except json.JSONDecodeError:
                    payload = None
                server.requests.append({
                    "path": self.path, "json": payload, "time": time.monotonic(),
                    "authorization": self.headers.get("Authorization"),
                })
                if payload is None:
                    self._error(400)
                    return
                if server.api_key and self.headers.get("Authorization") != f"Bearer {server.api_key}":
                    self._error(401)
                    return
                fault = server._next_fault()
                if fault and fault.delay:
                    time.sleep(fault.delay)
                if fault and fault.status:
                    headers = {}
                    if fault.retry_after is not None:
                        headers["Retry-After"] = f"{fault.retry_after:g}"
                    self._error(fault.status, headers)
                    return
                if fault and fault.invalid_json:
                    self._send(200, b'{"id": "chatcmpl-broken", "choices": [')
                    return
                if self.path.rstrip("/").endswith("/chat/completions"):
                    content = fault.content if fault and fault.content is not None else (
                        server.chat_handler(payload))
                    body = self._chat_body(payload, content)
                elif self.path.rstrip("/").endswith("/embeddings"):
                    texts = payload.get("input")
                    texts = [texts] if isinstance(texts, str) else list(texts or [])
                    vectors = server.embeddings_handler(texts, payload.get("model", ""))
                    body = {
                        "object": "list",
                        "data": [{"object": "embedding", "index": i, "embedding": v}
                                 for i, v in enumerate(vectors)],
                        "model": payload.get("model", ""),
                        "usage": {"prompt_tokens": sum(len(t.split()) for t in texts),
                                  "total_tokens": sum(len(t.split()) for t in texts)},
                    }
                else:
                    self._send(404, b'{"error": {"message": "not found", "type": "invalid_request_error"}}')
                    return
                self._send(200, json.dumps(body).encode(), truncate=bool(fault and fault.truncate))

            @staticmethod
            def _chat_body(payload: dict[str, Any], content: str) -> dict[str, Any]:
                prompt_tokens = sum(len(str(m.get("content", "")).split())
                                    for m in payload.get("messages", []))
                completion_tokens = len(content.split())
                return {
                    "id": f"chatcmpl-{hashlib.md5(content.encode()).hexdigest()[:24]}",
                    "object": "chat.completion",
                    "created": int(time.time()),
                    "model": payload.get("model", ""),
                    "choices": [{
                        "index": 0,
                        "message": {"role": "assistant", "content": content, "refusal": None,
                                    "annotations": []},
                        "logprobs": None,
                        "finish_reason": "stop",
                    }],
                    "usage": {"prompt_tokens": prompt_tokens,
                              "completion_tokens": completion_tokens,
                              "total_tokens": prompt_tokens + completion_tokens},
                    "system_fingerprint": "fp_papersift_test",
                }

        return Handler
