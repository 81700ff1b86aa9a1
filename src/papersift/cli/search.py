"""Commands of the search stage: embed, search, eval search."""

from __future__ import annotations

from pathlib import Path

import typer
from rich.console import Console

from papersift.cli import common
from papersift.cli.app import app, eval_app


@app.command("embed")
def embed_command(
    as_json: bool = typer.Option(False, "--json", help="Print the report as JSON."),
    no_index: bool = typer.Option(False, "--no-index", help="Only embed; do not update the index."),
) -> None:
    """Embed papers that are new or changed (resumable: run again after an interruption)."""
    from papersift.search import EmbedderError, embed_papers

    settings = common.settings()
    with common.store() as db, common.progress(disable=as_json) as bar:
        task = bar.add_task("embed", total=None, rate="")
        started = [0.0]

        def show(done: int, total: int) -> None:
            import time

            if not started[0]:
                started[0] = time.perf_counter()
            elapsed = time.perf_counter() - started[0]
            rate = f"{done / elapsed:,.0f}/s" if elapsed > 0 and done else ""
            bar.update(task, completed=done, total=total, rate=rate)

        try:
            report = embed_papers(db, settings, on_progress=show, update_index=not no_index)
        except EmbedderError as exc:
            raise common.fail(str(exc)) from None
    if as_json:
        common.emit_json(report)
    else:
        common.console.print(
            f"embedded [bold]{report['embedded']:,}[/bold] papers with {report['model']} "
            f"in {report['seconds']:.1f}s; {report['total']:,} stored", highlight=False)


@app.command("search")
def search_command(
    query: str = typer.Argument(..., help="Words, \"phrases\", prefix*, AND/OR/NOT, and filters "
                                "au:NAME cat:cs.LG year:2025 date:2025-01..2025-03 topic:SLUG."),
    mode: str = typer.Option("hybrid", "--mode", help="keyword, semantic or hybrid."),
    limit: int = typer.Option(10, "--limit", min=1, max=100, help="Results to show."),
    offset: int = typer.Option(0, "--offset", min=0, help="Results to skip (paging)."),
    as_json: bool = typer.Option(False, "--json", help="Print the results as JSON."),
) -> None:
    """Search the stored papers by keywords, by meaning, or both (the default)."""
    from papersift.search import EmbedderError, QueryError, search

    settings = common.settings()
    try:
        with common.store() as db:
            results = search(db, settings, query, mode=mode, limit=limit, offset=offset)
    except QueryError as exc:
        raise common.fail(str(exc), common.EXIT_USAGE) from None
    except EmbedderError as exc:
        raise common.fail(str(exc)) from None
    if as_json:
        common.emit_json(results.as_dict())
        return
    out = common.console
    for note in results.notes:
        out.print(f"[dim]note: {note}[/dim]", highlight=False)
    if results.message:
        out.print(results.message, highlight=False, markup=False)
    for rank, hit in enumerate(results.hits, start=results.offset + 1):
        out.print(f"[bold]{rank}. {_escape(hit.title)}[/bold]  [dim]{hit.paper_id} · "
                  f"{hit.primary_category or ''} · {hit.date or ''} · score {hit.score:.3f}[/dim]",
                  highlight=False)
        out.print("   " + _escape(hit.snippet), highlight=False)
    shown = len(results.hits)
    if shown:
        out.print(f"[dim]{results.offset + 1}-{results.offset + shown} of {results.total}"
                  f"{' (more with --offset)' if results.has_more else ''} in {results.took_ms:.0f} ms"
                  "[/dim]", highlight=False)


def _escape(text: str) -> str:
    from rich.markup import escape

    return escape(text)


@eval_app.command("search")
def eval_search_command(
    corpus: Path = typer.Option(..., "--corpus", help="BEIR corpus.jsonl[.gz]."),
    queries: Path = typer.Option(..., "--queries", help="BEIR queries.jsonl."),
    qrels: Path = typer.Option(..., "--qrels", help="BEIR qrels .tsv (query-id, corpus-id, score)."),
    mode: str = typer.Option("all", "--mode",
                             help="keyword, semantic, rrf (plain fusion, k=60), hybrid, or all."),
    as_json: bool = typer.Option(False, "--json", help="Print the figures as JSON."),
) -> None:
    """nDCG@10, Recall@100, MRR@10 and latency of search on a BEIR benchmark (temporary store)."""
    from papersift.search.evaluate import BenchmarkError, evaluate

    configs = None if mode == "all" else [m.strip() for m in mode.split(",") if m.strip()]
    settings = common.settings()
    with common.progress(disable=as_json) as bar:
        task = bar.add_task("embed corpus", total=None, rate="")
        try:
            results = evaluate(corpus, queries, qrels, settings, configs,
                               on_progress=lambda done, total: bar.update(task, completed=done,
                                                                           total=total))
        except BenchmarkError as exc:
            raise common.fail(str(exc), common.EXIT_USAGE) from None
    rows = [r.as_dict() for r in results]
    if as_json:
        common.emit_json(rows)
        return
    table = common.figures_table(
        f"search on {corpus.name} ({rows[0]['queries']} judged queries)",
        ("config", "nDCG@10", "Recall@100", "MRR@10", "p50 ms", "p95 ms"))
    for row in rows:
        table.add_row(row["config"], f"{row['ndcg@10']:.4f}", f"{row['recall@100']:.4f}",
                      f"{row['mrr@10']:.4f}", f"{row['p50_ms']:.1f}", f"{row['p95_ms']:.1f}")
    Console().print(table)
