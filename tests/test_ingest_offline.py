"""Every network source fails fast without network, pointing at the local snapshot instead."""

from __future__ import annotations

import time
from datetime import date

import pytest

from papersift.records import SourceError
from papersift.settings import load_settings
from papersift.sources import SourceOptions, open_source
from tests.upstream import closed_port

# (spec, the setting holding its URL, the path on the upstream host)
NETWORK_SOURCES = [
    ("arxiv:cs.LG", "arxiv_api_url", "/api/query"),
    ("oai:cs", "oai_url", "/oai"),
    ("announce:cs.LG", "rss_url", "/rss"),
    ("hf:2026-11-27", "hf_url", "/api/daily_papers"),
]


@pytest.mark.parametrize("host", ["closed-port", "unresolvable"])
@pytest.mark.parametrize(("spec", "url_setting", "path"), NETWORK_SOURCES,
                         ids=[s for s, _, _ in NETWORK_SOURCES])
def test_no_network_fails_fast_pointing_at_the_local_snapshot(
    spec: str, url_setting: str, path: str, host: str
) -> None:
    base = f"http://127.0.0.1:{closed_port()}" if host == "closed-port" else "http://nonexistent.invalid"
    # A long backoff would show up as a slow failure: "no network" must not be retried like a 503.
    settings = load_settings(**{url_setting: base + path}, request_delay=0, http_retries=5,
                             http_backoff=5.0)
    window = SourceOptions(since=date(2026, 11, 20), until=date(2026, 11, 27))
    started = time.monotonic()
    with pytest.raises(SourceError) as failure:
        list(open_source(spec, window, settings))
    assert time.monotonic() - started < 3.0
    assert "papersift ingest file:../shared/data/arxiv-2025-2026.jsonl.gz" in str(failure.value)
