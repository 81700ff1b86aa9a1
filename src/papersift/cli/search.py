"""Commands of the search stages: embed, keywords, search, eval search."""

from __future__ import annotations

from pathlib import Path
from typing import Any

import typer
from rich.console import Console
from rich.markup import escape

from papersift.cli import common
from papersift.cli.app import app, eval_app
from papersift.search import Embed, SearchResults, search
from papersift.search.evaluate import evaluate
from papersift.search.keywords_stage import Keywords


@app.command("embed")
def embed_command(
    as_json: bool = common.json_option(),
    no_index: bool = typer.Option(False, "--no-index", help="Only embed; do not update the index."),
    engine: str = typer.Option(None, "--engine",
                               help="local (this process) or ray (Ray actors); default: the "
                                    "embed_engine setting."),
    backfill: bool = typer.Option(
        False, "--backfill", help="For a first load of many papers into PostgreSQL: drop its "
        "vector index, write every vector, then build the index once (semantic search is "
        "slow until then)."),
) -> None:
    """Embed papers that are new or changed (resumable: run again after an interruption)."""
    with common.store() as db, common.progress(quiet=as_json) as show:
        report = Embed(update_index=not no_index, engine=engine,
                       backfill=backfill).run(db, common.settings(), show)
    common.finish(report, as_json)


@app.command("keywords")
def keywords_command(
    as_json: bool = common.json_option(),
    rebuild: bool = typer.Option(False, "--rebuild",
                                 help="Build the postings anew, however few papers changed."),
) -> None:
    """Build papersift's own keyword postings, or add new and changed papers to them
    (SQLite; `papersift update` runs this too)."""
    with common.store() as db, common.progress(quiet=as_json) as show:
        report = Keywords(rebuild=rebuild).run(db, common.settings(), show)
    common.finish(report, as_json)


@app.command("search")
def search_command(
    query: str = typer.Argument(..., help="Words, \"phrases\", prefix*, AND/OR/NOT, and filters "
                                "au:NAME cat:cs.LG year:2025 date:2025-01..2025-03 topic:SLUG."),
    mode: str = typer.Option("hybrid", "--mode", help="keyword, semantic or hybrid."),
    limit: int = typer.Option(10, "--limit", min=1, max=100, help="Results to show."),
    offset: int = typer.Option(0, "--offset", min=0, help="Results to skip (paging)."),
    as_json: bool = common.json_option(),
) -> None:
    """Search the stored papers by keywords, by meaning, or both (the default)."""
    with common.store() as db:
        results = search(db, common.settings(), query, mode=mode, limit=limit, offset=offset)
    common.output(results.as_dict(), as_json, lambda _: _print_results(results))


def _print_results(results: SearchResults) -> None:
    out = common.console
    for note in results.notes:
        out.print(f"[dim]note: {escape(note)}[/dim]", highlight=False)
    if results.message:
        out.print(results.message, highlight=False, markup=False)
    for rank, hit in enumerate(results.hits, start=results.offset + 1):
        out.print(f"[bold]{rank}. {escape(hit.title)}[/bold]  [dim]{hit.paper_id} · "
                  f"{hit.primary_category or ''} · {hit.date or ''} · score {hit.score:.3f}[/dim]",
                  highlight=False)
        out.print("   " + escape(hit.snippet), highlight=False)
    shown = len(results.hits)
    if shown:
        out.print(f"[dim]{results.offset + 1}-{results.offset + shown} of {results.total}"
                  f"{' (more with --offset)' if results.has_more else ''} in {results.took_ms:.0f} ms"
                  "[/dim]", highlight=False)


@eval_app.command("search")
def eval_search_command(
    corpus: Path = typer.Option(..., "--corpus", help="BEIR corpus.jsonl[.gz]."),
    queries: Path = typer.Option(..., "--queries", help="BEIR queries.jsonl."),
    qrels: Path = typer.Option(..., "--qrels", help="BEIR qrels .tsv (query-id, corpus-id, score)."),
    mode: str = typer.Option("all", "--mode",
                             help="keyword, semantic, rrf (plain fusion, k=60), hybrid, or all."),
    as_json: bool = common.json_option(),
) -> None:
    """nDCG@10, Recall@100, MRR@10 and latency of search on a BEIR benchmark (temporary store)."""
    configs = None if mode == "all" else [m.strip() for m in mode.split(",") if m.strip()]
    with common.progress(quiet=as_json) as show:
        results = evaluate(corpus, queries, qrels, common.settings(), configs, on_progress=show)
    rows = [r.as_dict() for r in results]
    common.output(rows, as_json, lambda _: _print_eval(corpus, rows))


def _print_eval(corpus: Path, rows: list[dict[str, Any]]) -> None:
    table = common.figures_table(
        f"search on {corpus.name} ({rows[0]['queries']} judged queries)",
        ("config", "nDCG@10", "Recall@100", "MRR@10", "p50 ms", "p95 ms"))
    for row in rows:
        table.add_row(row["config"], f"{row['ndcg@10']:.4f}", f"{row['recall@100']:.4f}",
                      f"{row['mrr@10']:.4f}", f"{row['p50_ms']:.1f}", f"{row['p95_ms']:.1f}")
    Console().print(table)
