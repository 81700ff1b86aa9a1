"""Categories of every source on a store mixing arXiv and bioRxiv/medRxiv/Crossref: names, category pages, search filters, follows, feeds and digests."""

from __future__ import annotations

from datetime import UTC, date, datetime

import numpy as np
import pytest
from starlette.testclient import TestClient

from papersift.delivery.digest import compose
from papersift.ingest.stage import Ingest
from papersift.readers import accounts, signals
from papersift.recommend import window as window_cache
from papersift.recommend.feed import build_feed
from papersift.records import PaperRecord
from papersift.search.service import search
from papersift.sources import SourceOptions
from papersift.sources.categories import category_field, category_label, is_category
from papersift.store import Store, add_records
from papersift.web.app import create_app
from tests.reader_helpers import MODEL, make_world
from tests.upstream_journals import Journals

pytestmark = pytest.mark.backends("sqlite", "postgresql")
YEAR_2024 = SourceOptions(since=date(2024, 1, 1), until=date(2024, 12, 31))
EVER = SourceOptions(since=date(2000, 1, 1), until=date(2026, 12, 1))


def test_every_source_s_categories_have_names_and_fields() -> None:
    assert category_label("biorxiv/neuroscience") == "Neuroscience (bioRxiv)"
    assert category_label("medrxiv/hiv_aids") == "HIV/AIDS (medRxiv)"
    assert category_label("journal/ecology_letters") == "Ecology letters (journal)"
    assert category_label("cs.LG") == "Machine Learning (cs.LG)"
    assert category_field("biorxiv/genomics") == "Life sciences"
    assert category_field("medrxiv/oncology") == "Medicine and health"
    assert category_field("cs.CL") == "Computer science" and category_field("hep-th") == "Physics"
    assert all(map(is_category, ("cs.LG", "biorxiv/neuroscience", "crossref/posted_content")))
    assert not any(map(is_category, ("68T05", "biorxiv/../x", "other/neuroscience")))


def test_category_pages_and_search_filters_on_a_mixed_store(store: Store, settings) -> None:
    world = make_world(store)  # arXiv papers (cs.LG)
    with Journals() as server:
        wanted = settings.replace(**server.settings_overrides(page_size=50))
        Ingest(["biorxiv:all", "medrxiv:all"], options=YEAR_2024).run(store, wanted)
        Ingest(["crossref:has-assertion:true"], options=EVER).run(store, wanted)
    neuro = store.pages.category_papers_page("biorxiv/neuroscience", 100, 0)
    assert neuro[0] > 0
    sizes = dict(store.pages.category_sizes())
    assert sizes["cs.LG"] == len([p for ids in world.values() for p in ids])
    journals = [c for c in sizes if c.startswith("journal/")]
    assert journals, "Crossref works are listed by their journal"
    with TestClient(create_app(settings)) as client:
        page = client.get("/categories/biorxiv/neuroscience")
        twin = client.get("/categories/biorxiv/neuroscience.json").json()
        journal = client.get(f"/categories/{journals[0]}.json")
        arxiv = client.get("/categories/cs.LG.json")
    assert page.status_code == 200 and "Neuroscience (bioRxiv)" in page.text
    # The footer credits every source the store holds, not arXiv alone.
    assert ('papers from <a href="https://arxiv.org/">arXiv</a>, <a href="https://www.biorxiv.org/">'
            'bioRxiv</a>, <a href="https://www.medrxiv.org/">medRxiv</a> and <a href='
            '"https://www.crossref.org/">Crossref</a>;') in page.text
    assert store.pages.category_namespaces(["biorxiv", "ecology"]) == ["", "biorxiv"]
    assert twin["title"] == "Neuroscience (bioRxiv)" and len(twin["papers"]) == min(
        neuro[0], len(twin["papers"])) and twin["papers"]
    assert journal.status_code == 200 and arxiv.status_code == 200
    found = search(store, settings, "cat:biorxiv/neuroscience neurons", mode="keyword",
                   snippets=False)
    ids = [hit.paper_id for hit in found.hits]
    assert ids and all(i.startswith("doi:10.1101/") for i in ids)
    # A whole source, as a whole archive: cat:biorxiv takes every bioRxiv subject, no arXiv paper.
    source = search(store, settings, "cat:biorxiv neurons", mode="keyword", snippets=False)
    assert {h.paper_id for h in source.hits} >= set(ids)
    assert all(h.paper_id.startswith("doi:10.1101/") for h in source.hits)
    both = {p["id"] for p in store.papers.iter_papers()}
    assert any(i.startswith("doi:") for i in both) and any(":" not in i for i in both)


def test_follows_feeds_and_digests_take_other_sources_categories(store: Store,
                                                                 settings) -> None:
    make_world(store)
    today = datetime.now(UTC).date().isoformat()
    rng = np.random.default_rng(3)
    preprints = [PaperRecord(
        id=f"doi:10.1101/2026.01.{n:02d}.5000{n}", title=f"Cortical neurons encode place {n}",
        abstract="We record neurons in the hippocampus and cortex of mice navigating a maze. "
                 "Place cells remap.", authors=[f"Neuro Author{n}", "Lab Head"],
        categories=["biorxiv/neuroscience"], source="biorxiv", announced=today,
        submitted=today, doi=f"10.1101/2026.01.{n:02d}.5000{n}") for n in range(4)]
    add_records(store, preprints)
    vectors = []
    for p in preprints:
        v = rng.normal(size=16)
        vectors.append((p.id, "h", (v / np.linalg.norm(v)).astype(np.float32)))
    store.embeddings.put_embeddings(MODEL, vectors)
    window_cache.clear()
    reader_id = accounts.add_reader(store, "ada", "correct horse battery")
    signals.follow(store, reader_id, "category:biorxiv/neuroscience")
    reader = store.readers.get_reader(reader_id)
    feed = build_feed(store, settings, reader)
    followed = [i["paper_id"] for i in feed.items
                if any(r["kind"] == "follow:category" for r in i["reasons"])]
    assert set(followed) == {p.id for p in preprints}
    digest = compose(store, settings.replace(mail_from="papersift@example.org"),
                     dict(reader, email=reader.get("email") or "ada@example.org"),
                     datetime.now(UTC).date(), None)
    assert digest is not None and {p.id for p in preprints} <= set(digest.papers)
    with pytest.raises(signals.SignalError):
        signals.follow(store, reader_id, "category:biorxiv/no_such_subject")
