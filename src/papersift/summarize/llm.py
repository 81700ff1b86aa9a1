"""The LLM writer: any OpenAI-compatible chat-completions endpoint, gated, with built-in fallback."""

from __future__ import annotations

import json
import re
import threading
import time
from collections.abc import Sequence
from concurrent.futures import ThreadPoolExecutor
from dataclasses import dataclass
from typing import Any

import httpx

from papersift.errors import PapersiftError
from papersift.plugins import Plugins, WriterPlugin
from papersift.retries import BadReply, GaveUp, Refused, post_json
from papersift.summarize import gate, style
from papersift.summarize.authors import author_naming
from papersift.summarize.builtin import Summary
from papersift.summarize.text import clean_latex
from papersift.summarize.writers import SummarizeError, Written, builtin_written

# Bump whenever the prompt changes: stored LLM summaries then become stale.
PROMPT_VERSION = "blurb-v2"
MAX_ATTEMPTS = 5          # HTTP attempts per request (429/5xx/timeouts/broken bodies)
MAX_CONSECUTIVE_ERRORS = 3  # papers in a row whose requests failed for good: the endpoint is down

SYSTEM_PROMPT = """You are a science desk editor writing for busy researchers. For the paper given,
write a faithful TL;DR and a news blurb in plain words, the way a good science news page does.

Rules:
- Use ONLY facts stated in the title and abstract. Every number you write must appear there
  exactly; never compute, round or invent numbers. Name a method, model or dataset only if the
  abstract names it, spelled as it does.
- Third person, news register. Never write "we", "our", "us" or "I", and never "this paper",
  "this study" or "this work": say what the authors did.
- Plain words, no promotional or abstract-boilerplate wording: not "novel", "state-of-the-art",
  "SOTA", "extensive experiments", "significantly", "comprehensive", "substantial", "notably",
  "remarkable", "superior", "leverage", "utilize", "a wide range of", "crucial", "pivotal",
  "promising", "paves the way", "sheds light", "demonstrates the effectiveness of", unless the
  word is a name. Say what was compared and by how much instead.
- Do not mention code, data or model releases, links or availability.
- Every sentence is complete and stands on its own: a main verb, no trailing clause cut off,
  no "this", "these" or "such" pointing at something the text has not said.
- No LaTeX: write symbols as plain text or Unicode.
- tldr: ONE sentence, at most 30 words, saying what the paper does and what it finds.
- blurb: 2 or 3 sentences, 40 to 90 words. Start with exactly "{naming}". Say in plain words
  what the work is and does; if the title opens with a name ("Name: ..."), use that name.
  End with the headline result and its number when the abstract reports one.

Answer with JSON only: {{"tldr": "...", "blurb": "..."}}"""

USER_TEMPLATE = """Title: {title}
Authors: {authors}
Abstract: {abstract}"""


class LLMError(PapersiftError):
    """The endpoint failed for good (after retries)."""


class ReplyError(ValueError):
    """The model's answer is not the JSON object asked for."""


_RE_FENCE = re.compile(r"```(?:json|JSON)?\s*(.*?)```", re.S)


def parse_reply(content: str) -> Summary:
    """{"tldr": ..., "blurb": ...} from a model's answer, also inside ```json fences or prose."""
    if not content or not content.strip():
        raise ReplyError("empty answer")
    candidates = [m.group(1) for m in _RE_FENCE.finditer(content)] + [content]
    for text in candidates:
        start, end = text.find("{"), text.rfind("}")
        if start < 0 or end <= start:
            continue
        try:
            data = json.loads(text[start:end + 1])
        except json.JSONDecodeError:
            continue
        if isinstance(data, dict):
            tldr, blurb = data.get("tldr") or data.get("TL;DR"), data.get("blurb")
            if isinstance(tldr, str) and isinstance(blurb, str) and tldr.strip() and blurb.strip():
                return Summary(tldr=" ".join(tldr.split()), blurb=" ".join(blurb.split()))
    raise ReplyError("no JSON object with string 'tldr' and 'blurb'")


def build_messages(paper: dict[str, Any], naming: str,
                   previous_failure: list[str] | None = None) -> list[dict[str, str]]:
    """The versioned prompt (PROMPT_VERSION) for one paper; a retry says what failed."""
    authors = ", ".join(paper.get("authors") or []) or "(unknown)"
    messages = [
        {"role": "system", "content": SYSTEM_PROMPT.format(naming=naming)},
        {"role": "user", "content": USER_TEMPLATE.format(
            title=clean_latex(paper.get("title") or ""), authors=authors,
            abstract=clean_latex(paper.get("abstract") or ""))},
    ]
    if previous_failure:
        messages.append({"role": "user", "content": (
            "Your previous answer was rejected: " + "; ".join(previous_failure)
            + ". Write it again following every rule, as JSON only.")})
    return messages


@dataclass(slots=True)
class ChatReply:
    content: str
    prompt_tokens: int
    completion_tokens: int


class ChatClient:
    """POST {base}/chat/completions, retried as papersift.retries.post_json retries."""

    def __init__(
        self, base_url: str, model: str, api_key: str = "", timeout: float = 60.0,
        max_attempts: int = MAX_ATTEMPTS, backoff: float = 1.0,
        client: httpx.Client | None = None,
    ) -> None:
        if not base_url:
            raise SummarizeError("llm_url is not set (an OpenAI-compatible base URL, e.g. "
                                 "http://127.0.0.1:8080/v1)")
        self.url = base_url.rstrip("/") + "/chat/completions"
        self.model = model
        self.max_attempts = max_attempts
        self.backoff = backoff
        headers = {"Authorization": f"Bearer {api_key}"} if api_key else {}
        self.client = client or httpx.Client(timeout=timeout, headers=headers)
        self._owns_client = client is None

    def close(self) -> None:
        if self._owns_client:
            self.client.close()

    def chat(self, messages: list[dict[str, str]]) -> ChatReply:
        try:
            return post_json(self.client, self.url, {
                "model": self.model, "messages": messages, "temperature": 0.2, "max_tokens": 500,
            }, _read_reply, attempts=self.max_attempts, backoff=self.backoff)
        except (Refused, GaveUp) as exc:
            raise LLMError(str(exc)) from None


def _read_reply(response: httpx.Response) -> ChatReply:
    try:
        return _chat_reply(response.json())
    except (json.JSONDecodeError, ReplyError, KeyError, TypeError, IndexError) as exc:
        raise BadReply(exc.__class__.__name__) from None


def _chat_reply(body: Any) -> ChatReply:
    content = body["choices"][0]["message"]["content"]
    if not isinstance(content, str):
        raise ReplyError("content is not a string")
    usage = body.get("usage") or {}
    return ChatReply(content, int(usage.get("prompt_tokens") or 0),
                     int(usage.get("completion_tokens") or 0))


class LLMWriter:
    """Summaries from an LLM, each through the gate (faithfulness, then the house style of
    docs/style.md): a failing answer is retried once with the reasons, then replaced by the
    built-in writer's output (the reason goes into the notes)."""

    name = "llm"

    def __init__(self, settings: Any, client: httpx.Client | None = None, backoff: float = 1.0) -> None:
        self.model = settings.llm_model or "default"
        self.concurrency = max(1, int(settings.llm_concurrency))
        self.chat_client = ChatClient(
            settings.llm_url, self.model, settings.llm_api_key, settings.llm_timeout,
            backoff=backoff, client=client,
        )
        self.identity = f"llm:{self.model}:{PROMPT_VERSION}"
        self.batch_size = self.concurrency * 8
        self._lock = threading.Lock()
        self.prompt_tokens = 0
        self.completion_tokens = 0
        self._consecutive_errors = 0
        # Set when the endpoint looks down; the stage stops after the current batch.
        self.failure: str | None = None

    def close(self) -> None:
        self.chat_client.close()

    def write_many(self, papers: Sequence[dict[str, Any]]) -> list[Written]:
        """All papers, `llm_concurrency` requests at a time, results in input order."""
        if self.concurrency == 1 or len(papers) <= 1:
            return [self.write_one(p) for p in papers]
        with ThreadPoolExecutor(max_workers=self.concurrency, thread_name_prefix="llm") as pool:
            return list(pool.map(self.write_one, papers))

    def write_one(self, paper: dict[str, Any]) -> Written:
        started = time.perf_counter()
        naming = author_naming(paper.get("authors") or [])[0]
        source = gate.build_source(paper, naming)
        tokens = 0
        failures: list[str] = []
        notes: list[str] = []
        endpoint_failed = False
        for _attempt in range(2):  # the answer, and one retry when it fails the gate
            if self.failure:
                notes.append(f"llm unavailable: {self.failure}")
                endpoint_failed = True
                break
            try:
                reply = self.chat_client.chat(build_messages(paper, naming, failures or None))
            except LLMError as exc:
                notes.append(f"llm error: {exc}")
                endpoint_failed = True
                with self._lock:
                    self._consecutive_errors += 1
                    if self._consecutive_errors >= MAX_CONSECUTIVE_ERRORS:
                        self.failure = str(exc)
                break
            tokens += reply.prompt_tokens + reply.completion_tokens
            with self._lock:
                self._consecutive_errors = 0
                self.prompt_tokens += reply.prompt_tokens
                self.completion_tokens += reply.completion_tokens
            try:
                summary = parse_reply(reply.content)
            except ReplyError as exc:
                failures = [f"unusable answer: {exc}"]
                notes.append(failures[0])
                continue
            failures = gate.check(summary.tldr, summary.blurb, source=source) or \
                style.style_reasons(summary.tldr, summary.blurb, clean_latex(paper.get("title") or ""),
                                    clean_latex(paper.get("abstract") or ""))
            if not failures:
                return Written(
                    paper_id=paper["id"], summary=summary, writer="llm", model=self.model,
                    prompt_version=PROMPT_VERSION, notes=notes, tokens=tokens,
                    seconds=time.perf_counter() - started,
                )
            notes.append("gate: " + "; ".join(failures))
        fallback = builtin_written(paper)
        fallback.notes = [*notes, "replaced by the builtin writer", *fallback.notes]
        fallback.tokens = tokens
        fallback.seconds = time.perf_counter() - started
        fallback.retry_later = endpoint_failed
        return fallback


def register(plugins: Plugins) -> None:
    plugins.writers.add(WriterPlugin(
        "llm", "any OpenAI-compatible chat endpoint (llm_url, llm_model), every answer gated",
        LLMWriter))
