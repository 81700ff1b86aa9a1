"""Optional LLM naming of topics through an OpenAI-compatible chat endpoint: a short human
label from the key phrases and a few titles, validated and cached; key phrases as fallback."""

from __future__ import annotations

import hashlib
import json
import re
import threading
from concurrent.futures import ThreadPoolExecutor
from typing import Any

import httpx

from papersift.errors import PapersiftError
from papersift.retries import SERVICE_BACKOFF, BadReply, GaveUp, Refused, post_json
from papersift.settings import Settings

PROMPT_VERSION = "topic-name-1"
_TITLES = 5
MAX_CHARS = 60
MAX_FAILURES_IN_A_ROW = 3  # topics whose requests failed for good: the endpoint is down
MAX_WORDS = 8
# Names that would fit half the site: they name no topic.
GENERIC_NAMES = frozenset(
    name.lower() for name in (
        "machine learning", "deep learning", "artificial intelligence", "ai", "research",
        "computer science", "miscellaneous", "other", "others", "general", "topic", "topics",
        "various topics", "ai research", "machine learning research", "neural networks",
        "data science", "computer vision and machine learning", "misc", "unknown", "none",
        "n/a", "papers", "science",
    )
)
_PREFIX = re.compile(r"^(?:topic|label|name|title)\s*[:\-]\s*", re.IGNORECASE)

SYSTEM_PROMPT = (
    "You name research topics for a news site read by researchers. Answer with the name only: "
    "2 to 6 words, the words researchers in the field use, no quotes, no trailing full stop, "
    "no explanation."
)


class NamingError(PapersiftError):
    """The LLM endpoint failed for good (after retries)."""


def validate_name(text: str) -> tuple[str | None, str]:
    """(cleaned name, "") when acceptable, else (None, why not)."""
    name = _PREFIX.sub("", text.strip()).strip()
    name = name.rstrip(".").strip()
    if not name:
        return None, "empty"
    if "\n" in name or "\r" in name:
        return None, "several lines"
    if any(q in name for q in "\"'`“”‘’«»"):
        return None, "quotes"
    if len(name) > MAX_CHARS or len(name.split()) > MAX_WORDS:
        return None, "too long"
    if len(name) < 3:
        return None, "too short"
    if name.lower() in GENERIC_NAMES:
        return None, "generic"
    if not any(ch.isalpha() for ch in name):
        return None, "no words"
    return name, ""


def naming_input(model: str, phrases: list[str], titles: list[str]) -> str:
    """Hash of everything the LLM is shown: equal hashes reuse the cached answer."""
    payload = json.dumps([model, PROMPT_VERSION, phrases, titles], ensure_ascii=False)
    return hashlib.blake2b(payload.encode("utf-8"), digest_size=16).hexdigest()


def user_prompt(phrases: list[str], titles: list[str]) -> str:
    listed = "\n".join(f"- {t}" for t in titles)
    return (f"Key phrases of the topic: {', '.join(phrases)}\n"
            f"Typical paper titles:\n{listed}\n"
            "Name this topic in 2 to 6 words.")


def _chat(client: httpx.Client, settings: Settings, messages: list[dict[str, str]]) -> str:
    """One chat completion, retried as papersift.retries.post_json retries."""
    url = settings.llm_url.rstrip("/") + "/chat/completions"
    headers = {"Authorization": f"Bearer {settings.llm_api_key}"} if settings.llm_api_key else {}
    body = {"model": settings.llm_model, "messages": messages, "temperature": 0,
            "max_tokens": 32}
    try:
        return post_json(client, url, body, _content, attempts=int(settings.http_retries) + 1,
                         backoff=SERVICE_BACKOFF, headers=headers)
    except Refused as exc:
        raise NamingError(str(exc)) from None
    except GaveUp as exc:
        raise NamingError(f"LLM endpoint failed after {exc.attempts} attempts: {exc.last}") from None


def _content(response: httpx.Response) -> str:
    try:
        return str(response.json()["choices"][0]["message"]["content"] or "")
    except (ValueError, KeyError, IndexError, TypeError) as exc:
        raise BadReply(type(exc).__name__) from None


def name_topic(client: httpx.Client, settings: Settings, phrases: list[str],
               titles: list[str]) -> tuple[str | None, str]:
    """(validated name or None, note) for one topic."""
    content = _chat(client, settings, [
        {"role": "system", "content": SYSTEM_PROMPT},
        {"role": "user", "content": user_prompt(phrases, titles)},
    ])
    name, why = validate_name(content)
    if name is None:
        # One retry with the reason: models often add quotes or an explanation.
        content = _chat(client, settings, [
            {"role": "system", "content": SYSTEM_PROMPT},
            {"role": "user", "content": user_prompt(phrases, titles)},
            {"role": "assistant", "content": content},
            {"role": "user", "content": f"That answer was rejected ({why}). "
                                        "Answer with the name only."},
        ])
        name, why = validate_name(content)
    return name, "" if name else f"rejected: {why}"


class _Namer:
    """name_topic for one (topic, titles, key) job after another, from several threads. Past
    MAX_FAILURES_IN_A_ROW failures in a row the endpoint is taken to be down and the rest are
    not asked (each would spend every retry on it): an outage costs a build seconds, not
    ~15 s a topic."""

    def __init__(self, client: httpx.Client, settings: Settings) -> None:
        self.client, self.settings = client, settings
        self._lock = threading.Lock()
        self._in_a_row = 0

    def __call__(self, job: tuple[dict[str, Any], list[str], str]
                 ) -> tuple[int, str, str | None, str]:
        topic, titles, key = job
        if self._in_a_row >= MAX_FAILURES_IN_A_ROW:
            return topic["id"], key, None, "failed: not asked, the endpoint looks down"
        try:
            name, note = name_topic(self.client, self.settings, topic["key_phrases"], titles)
        except NamingError as exc:
            with self._lock:
                self._in_a_row += 1
            return topic["id"], key, None, f"failed: {exc}"
        with self._lock:
            self._in_a_row = 0
        return topic["id"], key, name, note


def name_topics(store: Any, settings: Settings, client: httpx.Client | None = None
                ) -> dict[str, Any]:
    """Give every active topic an LLM name (cached by input hash); topics whose name fails
    validation or whose request fails keep their key-phrase label."""
    if not settings.llm_url:
        return {"named": 0, "skipped": "llm_url is not set"}
    model = settings.llm_model or "default"
    topics = store.topics.list_topics(include_other=False)
    jobs = []
    for topic in topics:
        titles = store.topics.topic_sample_titles(topic["id"], _TITLES)
        jobs.append((topic, titles, naming_input(model, topic["key_phrases"], titles)))
    results: dict[int, str | None] = {}
    counts = {"named": 0, "cached": 0, "rejected": 0, "failed": 0}
    todo = []
    for topic, titles, key in jobs:
        found, label = store.topics.cached_topic_label(key)
        if found:
            results[topic["id"]] = label
            counts["cached"] += 1
        else:
            todo.append((topic, titles, key))
    own_client = client is None
    client = client or httpx.Client(timeout=float(settings.llm_timeout))
    errors: list[str] = []
    try:
        with ThreadPoolExecutor(max_workers=max(1, int(settings.llm_concurrency))) as pool:
            for topic_id, key, name, note in pool.map(_Namer(client, settings), todo):
                results[topic_id] = name
                if note.startswith("failed"):
                    counts["failed"] += 1
                    errors.append(note)
                    continue  # an outage is not an answer: ask again next time
                store.topics.put_topic_label(key, name, model, note or None)
                counts["named" if name else "rejected"] += 1
    finally:
        if own_client:
            client.close()
    # Two topics with one name would be one topic to a reader: the larger keeps it.
    seen: set[str] = set()
    for topic in topics:
        name = results.get(topic["id"])
        if name and name.lower() in seen:
            results[topic["id"]] = None
            counts["duplicates"] = counts.get("duplicates", 0) + 1
        elif name:
            seen.add(name.lower())
    store.topics.set_topic_llm_labels([(tid, label) for tid, label in results.items()])
    return counts | {"errors": errors[:5]}
