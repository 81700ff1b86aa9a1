"""The LLM writer against a real local OpenAI-compatible server, including its faults."""

from __future__ import annotations

import json
import threading
import time

import pytest

from papersift.records import PaperRecord
from papersift.store import add_records
from papersift.summarize.gate import check
from papersift.summarize.llm import PROMPT_VERSION, LLMWriter, ReplyError, parse_reply
from papersift.summarize.stage import Summarize
from tests.openai_server import Fault, OpenAIServer

PAPER = {
    "id": "2601.00001",
    "title": "LoGRA: Low-Rank Gradient Approximation for Memory-Efficient Reasoning",
    "abstract": (
        "Fine-tuning large language models for reasoning is limited by accelerator memory.\n"
        "In this paper, we propose LoGRA, a low-rank gradient approximation that stores\n"
        "compressed gradients. We evaluate LoGRA on three reasoning benchmarks and 1,000\n"
        "held-out problems. Experiments show that LoGRA reduces memory by up to 45.7\\% while\n"
        "matching the accuracy of full fine-tuning."
    ),
    "authors": ["Wei Zhang", "Ana Lopez", "Sam Osei"],
}
GOOD = {
    "tldr": "LoGRA, a low-rank gradient approximation, cuts fine-tuning memory by up to 45.7 "
            "percent while matching full fine-tuning accuracy.",
    "blurb": "Zhang et al. present LoGRA, a low-rank gradient approximation that stores compressed "
             "gradients so that large language models can be fine-tuned for reasoning with less "
             "memory. The authors test it on three reasoning benchmarks and 1000 held-out problems. "
             "They report memory reductions of up to 45.7 percent while matching the accuracy of "
             "full fine-tuning.",
}
# Faithful, but in the abstract's register and with a promise of code: the style gate's business.
PROMOTIONAL = dict(GOOD, blurb=GOOD["blurb"].replace(
    "They report memory reductions", "Extensive experiments show significant memory reductions"))
RELEASING = dict(GOOD, blurb=GOOD["blurb"].replace(
    "full fine-tuning.", "full fine-tuning, and the code is publicly available."))
UNNAMED = dict(GOOD, blurb=GOOD["blurb"].replace("present LoGRA, a", "present a"))
FIRST_PERSON = dict(GOOD, blurb=GOOD["blurb"].replace("The authors test", "We test"))
INVENTED = dict(GOOD, blurb=GOOD["blurb"].replace("45.7 percent", "62.5 percent"))


def good_answer(request: dict) -> str:
    return "```json\n" + json.dumps(GOOD) + "\n```"


def writer_for(server: OpenAIServer, settings, **overrides) -> LLMWriter:
    values = {"llm_url": server.url, "llm_model": "test-model", "llm_timeout": 0.5,
              "llm_concurrency": 2, **overrides}
    return LLMWriter(settings.replace(**values), backoff=0.01)


def test_faithful_answer_is_used_with_provenance_and_tokens(settings) -> None:
    assert check(GOOD["tldr"], GOOD["blurb"], PAPER) == []
    with OpenAIServer(api_key="sk-test") as server:
        server.chat_handler = good_answer
        writer = writer_for(server, settings, llm_api_key="sk-test")
        written = writer.write_one(PAPER)
    assert written.writer == "llm" and written.model == "test-model"
    assert written.prompt_version == PROMPT_VERSION and written.passed
    assert written.summary.blurb == GOOD["blurb"]
    request = server.requests[0]
    assert request["path"] == "/v1/chat/completions"
    assert request["authorization"] == "Bearer sk-test"
    assert request["json"]["model"] == "test-model"
    prompt = " ".join(m["content"] for m in request["json"]["messages"])
    assert "Zhang et al." in prompt and "45.7%" in prompt and "\\%" not in prompt
    usage_prompt = sum(len(m["content"].split()) for m in request["json"]["messages"])
    assert written.tokens == usage_prompt + len(good_answer({}).split())
    assert writer.prompt_tokens == usage_prompt


@pytest.mark.parametrize("fault", [
    Fault(status=429, retry_after=0.2),
    Fault(status=500),
    Fault(status=503),
    Fault(delay=1.5),          # longer than llm_timeout: a timeout
    Fault(invalid_json=True),
    Fault(truncate=True),
])
def test_transient_faults_are_retried(settings, fault: Fault) -> None:
    with OpenAIServer() as server:
        server.chat_handler = good_answer
        server.faults.append(fault)
        started = time.monotonic()
        written = writer_for(server, settings).write_one(PAPER)
        elapsed = time.monotonic() - started
    assert written.writer == "llm" and written.notes == []
    assert len(server.requests) == 2
    if fault.retry_after:
        assert elapsed >= fault.retry_after  # Retry-After is honoured


def test_first_person_answer_is_retried_with_the_reason(settings) -> None:
    with OpenAIServer() as server:
        server.chat_handler = good_answer
        server.faults.append(Fault(content=json.dumps(FIRST_PERSON)))
        written = writer_for(server, settings).write_one(PAPER)
    assert written.writer == "llm" and written.summary.blurb == GOOD["blurb"]
    assert written.notes == ["gate: blurb: first person: We"]
    retry_messages = server.requests[1]["json"]["messages"]
    assert "first person" in retry_messages[-1]["content"]


def test_prompt_asks_for_the_house_style(settings) -> None:
    with OpenAIServer() as server:
        server.chat_handler = good_answer
        written = writer_for(server, settings).write_one(PAPER)
    system = server.requests[0]["json"]["messages"][0]["content"]
    assert PROMPT_VERSION == "blurb-v2" and written.prompt_version == "blurb-v2"
    for asked in ("2 or 3 sentences", "state-of-the-art", "extensive experiments",
                  "significantly", "releases", "complete", "headline result", "name"):
        assert asked in system


@pytest.mark.parametrize(("answer", "reason"), [
    (PROMOTIONAL, "gate: blurb: abstract-register wording: Extensive, significant"),
    (RELEASING, "gate: blurb: release promise: code is publicly available"),
    (UNNAMED, "gate: blurb: the title's name missing: LoGRA"),
])
def test_answer_off_the_house_style_is_retried_with_the_reason(settings, answer, reason) -> None:
    assert check(answer["tldr"], answer["blurb"], PAPER) == []  # faithful all the same
    with OpenAIServer() as server:
        server.chat_handler = good_answer
        server.faults.append(Fault(content=json.dumps(answer)))
        written = writer_for(server, settings).write_one(PAPER)
    assert written.writer == "llm" and written.summary.blurb == GOOD["blurb"]
    assert written.notes == [reason]
    assert reason.removeprefix("gate: ") in server.requests[1]["json"]["messages"][-1]["content"]


def test_answer_off_the_house_style_twice_falls_back_to_builtin(settings) -> None:
    with OpenAIServer() as server:
        server.faults += [Fault(content=json.dumps(PROMOTIONAL)), Fault(content=json.dumps(RELEASING))]
        written = writer_for(server, settings).write_one(PAPER)
    assert len(server.requests) == 2 and written.writer == "builtin" and written.passed
    assert written.notes[2] == "replaced by the builtin writer"


def test_invented_number_twice_falls_back_to_builtin(settings) -> None:
    with OpenAIServer() as server:
        server.faults += [Fault(content=json.dumps(INVENTED)), Fault(content=json.dumps(INVENTED))]
        server.chat_handler = good_answer
        written = writer_for(server, settings).write_one(PAPER)
    assert len(server.requests) == 2
    assert written.writer == "builtin" and written.passed
    assert written.notes[:3] == ["gate: blurb: number not in the abstract: 62.5",
                                 "gate: blurb: number not in the abstract: 62.5",
                                 "replaced by the builtin writer"]
    assert written.summary.blurb.startswith("Zhang et al. propose LoGRA")
    assert written.tokens and written.tokens > 0


def test_unparseable_answers_and_dead_endpoint_fall_back(settings) -> None:
    with OpenAIServer() as server:
        server.chat_handler = lambda request: "Sure! Here is a summary without any JSON."
        written = writer_for(server, settings).write_one(PAPER)
    assert written.writer == "builtin"
    assert written.notes[0].startswith("unusable answer")
    with OpenAIServer() as server:
        server.faults += [Fault(status=500)] * 10
        written = writer_for(server, settings).write_one(PAPER)
    assert written.writer == "builtin"
    assert written.notes[0] == "llm error: gave up after 5 attempts: HTTP 500"
    with OpenAIServer() as server:
        server.faults.append(Fault(status=401))
        written = writer_for(server, settings).write_one(PAPER)
    assert written.writer == "builtin" and "HTTP 401" in written.notes[0]
    assert len(server.requests) == 1  # a client error is not retried


def test_requests_run_concurrently_within_the_limit(settings) -> None:
    active, peak, lock = [0], [0], threading.Lock()

    def slow_answer(request: dict) -> str:
        with lock:
            active[0] += 1
            peak[0] = max(peak[0], active[0])
        time.sleep(0.15)
        with lock:
            active[0] -= 1
        return json.dumps(GOOD)

    papers = [dict(PAPER, id=f"2601.{n:05d}") for n in range(8)]
    with OpenAIServer() as server:
        server.chat_handler = slow_answer
        results = writer_for(server, settings, llm_concurrency=3).write_many(papers)
    assert [w.paper_id for w in results] == [p["id"] for p in papers]
    assert all(w.writer == "llm" for w in results)
    assert 1 < peak[0] <= 3


def test_parse_reply_variants() -> None:
    plain = json.dumps(GOOD)
    assert parse_reply(plain).tldr == GOOD["tldr"]
    assert parse_reply("Here you go:\n```json\n" + plain + "\n```\nEnjoy!").blurb == GOOD["blurb"]
    assert parse_reply("Answer: " + plain + " -- done").tldr == GOOD["tldr"]
    for bad in ("", "no json", '{"tldr": "x"}', '{"tldr": 1, "blurb": 2}', "[1, 2]", "{broken"):
        with pytest.raises(ReplyError):
            parse_reply(bad)


def test_stage_with_llm_writer_records_provenance(store, settings) -> None:
    add_records(store, [PaperRecord(id=PAPER["id"], title=PAPER["title"],
                                     abstract=PAPER["abstract"], authors=PAPER["authors"],
                                     categories=["cs.LG"], source="file", announced="2026-01-05")])
    with OpenAIServer() as server:
        server.chat_handler = good_answer
        llm_settings = settings.replace(llm_url=server.url, llm_model="test-model")
        report = Summarize(writer="llm").run(store, llm_settings)
        again = Summarize(writer="llm").run(store, llm_settings)
    assert report.counts["written"] == 1 and report.counts["tokens"] > 0 and report.counts["fallbacks"] == 0
    assert again.counts["written"] == 0 and len(server.requests) == 1
    stored = store.summaries.get_summary(PAPER["id"])
    assert (stored["writer"], stored["model"], stored["prompt_version"]) == (
        "llm", "test-model", PROMPT_VERSION)
    assert stored["tokens"] > 0 and stored["seconds"] >= 0 and stored["created_at"]


def test_endpoint_down_stops_the_run_and_stand_ins_are_retried_later(store, settings) -> None:
    add_records(store, [
        PaperRecord(id=f"2601.{n:05d}", title=f"{PAPER['title']}, part {n}", abstract=PAPER["abstract"],
                    authors=PAPER["authors"], categories=["cs.LG"], source="file")
        for n in range(10)])
    with OpenAIServer() as server:
        server.faults += [Fault(status=503)] * 100
        down = settings.replace(llm_url=server.url, llm_model="test-model", llm_concurrency=1,
                                llm_timeout=0.5)
        writer = LLMWriter(down, backoff=0.001)
        report = Summarize(writer=writer, batch_size=4).run(store, down)
        assert report.error and "HTTP 503" in report.error
        assert report.counts["written"] == 4 and report.counts["retry_later"] == 4
        stand_in = store.summaries.get_summary("2601.00000")
        assert stand_in["writer"] == "builtin" and "llm error" in stand_in["notes"]
        server.faults.clear()
        server.chat_handler = good_answer
        report = Summarize(writer=LLMWriter(down, backoff=0.001)).run(store, down)
    assert report.error is None and report.counts["written"] == 10
    assert [store.summaries.get_summary(s["id"])["writer"] for s in store.summaries.summary_states()
            ] == ["llm"] * 10
