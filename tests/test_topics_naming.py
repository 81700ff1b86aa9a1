"""Optional LLM naming against a real local OpenAI-compatible server: validated, cached, with
the key-phrase label as fallback when the answer is bad or the endpoint fails."""

from __future__ import annotations

import re

from papersift.topics import BuildTopics
from papersift.topics.naming import name_topics, validate_name
from tests.openai_server import Fault, OpenAIServer
from tests.test_topics_build import PARAMS, add_papers, make_corpus


def _first_phrase(request: dict) -> str:
    prompt = request["messages"][1]["content"]
    return re.search(r"Key phrases of the topic: ([^,\n]+)", prompt).group(1)


def test_validate_name() -> None:
    assert validate_name("  Topic: Reward modelling.\n") == ("Reward modelling", "")
    assert validate_name('"Reward modelling"')[0] is None
    assert validate_name("Reward modelling\nbecause the papers...")[0] is None
    assert validate_name("Machine learning")[1] == "generic"
    assert validate_name("word " * 12)[1] == "too long"


def test_llm_names_topics_validates_and_caches(store, settings) -> None:
    add_papers(store, settings, make_corpus())
    BuildTopics(params=PARAMS).run(store, settings)
    with OpenAIServer(api_key="sekrit") as server:
        answers: dict[str, list[str]] = {}

        def handler(request: dict) -> str:
            first = _first_phrase(request)
            if "graph" in first.lower() or "node" in first.lower() or "message" in first.lower():
                return "Machine learning"  # generic twice: rejected, key phrases stay
            if len(request["messages"]) == 2 and not answers.get(first):
                answers[first] = ["quoted"]
                return f'"{first.title()} research"'  # quotes: rejected, asked once more
            return f"{first.capitalize()} research"

        server.chat_handler = handler
        server.faults.append(Fault(status=429, retry_after=0))  # retried, not a failure
        named = settings.replace(llm_url=server.url, llm_model="m1", llm_api_key="sekrit",
                                 llm_concurrency=2)
        counts = name_topics(store, named)
        assert counts["named"] == 3 and counts["rejected"] == 1 and counts["failed"] == 0
        topics = {t["slug"]: t for t in store.topics.list_topics(include_other=False)}
        graph = [t for t in topics.values() if t["llm_label"] is None]
        assert len(graph) == 1 and graph[0]["label"] == graph[0]["key_label"]
        for topic in topics.values():
            if topic["llm_label"]:
                assert topic["label"] == topic["llm_label"]
                assert topic["llm_label"].endswith("research") and '"' not in topic["llm_label"]
        requests = len(server.requests)
        assert all(r["authorization"] == "Bearer sekrit" for r in server.requests)
        # Same phrases and titles: answered from the cache, no request at all.
        again = name_topics(store, named)
        assert again["cached"] == 4 and len(server.requests) == requests


def test_llm_outage_keeps_key_phrase_labels_and_is_retried_later(store, settings) -> None:
    add_papers(store, settings, make_corpus())
    BuildTopics(params=PARAMS).run(store, settings)
    with OpenAIServer() as server:
        server.chat_handler = lambda request: "Some topic name"
        server.faults.extend(Fault(status=500) for _ in range(6))
        named = settings.replace(llm_url=server.url, llm_model="m1", http_retries=1,
                                 llm_concurrency=1)
        counts = name_topics(store, named)
        assert counts["failed"] == 4 and counts["named"] == 0
        # Three topics failed in a row (two attempts each): the fourth is not asked.
        assert len(server.requests) == 6
        assert counts["errors"][-1] == "failed: not asked, the endpoint looks down"
        assert all(t["label"] == t["key_label"] for t in store.topics.list_topics())
        counts = name_topics(store, named)  # faults used up: now it works, nothing was cached
        assert counts["named"] == 4 and counts["duplicates"] == 3
        names = [t["label"] for t in store.topics.list_topics(include_other=False)]
        assert names.count("Some topic name") == 1  # the largest topic keeps a shared name
