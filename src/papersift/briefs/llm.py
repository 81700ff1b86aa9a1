"""The LLM writer of a weekly brief: 3-5 sentences from the five picks' abstracts, each naming the
papers it comes from; what it writes goes through the same faithfulness rule as the built-in
writer's (briefs/check.py), and a brief that breaks it gives way to the built-in one."""

from __future__ import annotations

import json
from collections.abc import Mapping, Sequence
from typing import Any

from papersift.settings import Settings
from papersift.summarize.llm import ChatClient, LLMError

PROMPT_VERSION = "brief-1"
SYSTEM = (
    "You write the weekly brief of a research topic for a science newsletter. Write 3 to 5 "
    "sentences, one idea each, in plain words, using ONLY the titles and abstracts given. "
    "Every sentence names the papers it draws on by their arXiv id in parentheses, e.g. "
    "'(2506.01234)'. Use no number, name or claim that is not in a cited abstract. Answer with "
    'JSON only: {"sentences": [{"text": "...", "cites": ["2506.01234"]}]}.')


def _messages(picks: Sequence[Mapping[str, Any]]) -> list[dict[str, str]]:
    papers = "\n\n".join(f"[{p['id']}] {' '.join(str(p['title']).split())}\n"
                         f"{' '.join(str(p['abstract']).split())}" for p in picks)
    return [{"role": "system", "content": SYSTEM},
            {"role": "user", "content": f"This week's five papers to read:\n\n{papers}"}]


def parse_sentences(content: str) -> list[dict[str, Any]]:
    """The sentences of a reply ([] when it is not the JSON asked for)."""
    text = content.strip().removeprefix("```json").removeprefix("```").removesuffix("```")
    try:
        body = json.loads(text)
        return [{"text": str(s["text"]).strip(), "cites": [str(c) for c in s["cites"]]}
                for s in body["sentences"]]
    except (json.JSONDecodeError, KeyError, TypeError):
        return []


class LLMBriefWriter:
    """A briefs Writer over an OpenAI-compatible chat endpoint (llm_url, llm_model)."""

    def __init__(self, settings: Settings, client: Any = None) -> None:
        self.chat = ChatClient(settings.llm_url, settings.llm_model or "default",
                               settings.llm_api_key, settings.llm_timeout, client=client)
        self.identity = f"llm:{settings.llm_model or 'default'}:{PROMPT_VERSION}"
        self.failures = 0

    def __call__(self, picks: Sequence[Mapping[str, Any]]) -> list[dict[str, Any]]:
        try:
            return parse_sentences(self.chat.chat(_messages(picks)).content)
        except LLMError:
            self.failures += 1
            return []  # breaks the rule: the built-in brief stands in

    def close(self) -> None:
        self.chat.close()
