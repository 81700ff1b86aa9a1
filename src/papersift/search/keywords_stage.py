"""The keywords stage: build the store's own keyword postings, or add the papers added or changed since to their tail."""

from __future__ import annotations

import time

from papersift.settings import Settings
from papersift.stages import OnProgress, Progress, Report, no_progress
from papersift.store import Store


class Keywords:
    """Keep papersift's keyword postings in step with the papers (see store.search.Search).

    Nothing to do on a backend that keeps none, or below `keyword_postings_min_papers`. A
    first build, or one once the papers added or changed since pass
    `keyword_postings_rebuild_share` of it, reads the whole keyword index (at a million
    papers about 2.5 minutes on SQLite, 8 on PostgreSQL); otherwise the new and changed
    papers go to the tail in seconds. Searches go on meanwhile, on the previous postings and
    the database's own index.
    """

    name = "keywords"

    def __init__(self, rebuild: bool = False) -> None:
        self.rebuild = rebuild  # build anew whatever the tail's size

    def run(self, store: Store, settings: Settings,
            on_progress: OnProgress = no_progress) -> Report:
        started = time.perf_counter()
        status = store.search.keyword_postings_status()
        if status is None:
            return Report(stage=self.name, details={
                "not_run": "this store keeps no keyword postings"})
        papers = store.papers.count_papers()
        if not status["built"] and papers < settings.keyword_postings_min_papers and not self.rebuild:
            # The database's own index ranks this few fast enough.
            return Report(stage=self.name, counts={"papers": papers}, details={
                "not_run": f"{papers:,} papers, below keyword_postings_min_papers"
                           f" ({settings.keyword_postings_min_papers:,})"})
        counts: dict[str, int] = {}
        details: dict[str, object] = {}
        since_build = status["tail"] + status["behind"]  # papers added or changed since
        if self.rebuild or not status["built"] or (
                since_build > settings.keyword_postings_rebuild_share * status["papers"]):
            def progress(done: int, total: int) -> None:
                on_progress(Progress(self.name, done, total, note="building", unit="entries"))

            built = store.search.build_keyword_postings(progress)
            counts["built"] = int(built["papers"])
            details.update(terms=built["terms"], build=built["build"])
        tail = store.search.update_keyword_postings()
        counts.update(added=tail["added"], changed=tail["changed"])
        after = store.search.keyword_postings_status() or {}
        counts["tail"] = int(after.get("tail", 0))
        return Report(stage=self.name, seconds=time.perf_counter() - started, counts=counts,
                      details=details)
