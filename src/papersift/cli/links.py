"""Commands of links, threads and weekly briefs: links build, briefs build, eval threads, eval briefs."""

from __future__ import annotations

from dataclasses import replace
from pathlib import Path
from typing import Any

import typer

from papersift.briefs.check import check_briefs
from papersift.briefs.stage import Briefs
from papersift.cli import common
from papersift.cli.app import App, app, eval_app
from papersift.links.corpus import EmbeddingCache, load_papers, matrix_source
from papersift.links.evaluate import evaluate_threads, load_judged
from papersift.links.linker import LinkParams
from papersift.links.stage import Links
from papersift.links.stoplist import learn_old_names
from papersift.links.threads import Corpus
from papersift.search.embed import default_embedder

links_app = App(help="Links between papers through the names of their artefacts, and threads.",
                no_args_is_help=True)
app.add_typer(links_app, name="links")
briefs_app = App(help="Weekly briefs of every topic.", no_args_is_help=True)
app.add_typer(briefs_app, name="briefs")


@links_app.command("build")
def links_build_command(
    redo: bool = typer.Option(False, "--redo", help="Forget every link and read every paper "
                              "again (else only the papers not read yet)."),
    as_json: bool = common.json_option(),
) -> None:
    """Link new papers to the earlier papers whose named artefacts (methods, datasets,
    benchmarks) they use, and rebuild the threads they touch (resumable)."""
    with common.store() as db, common.progress(quiet=as_json) as show:
        report = Links(redo=redo).run(db, common.settings(), show)
    common.finish(report, as_json)


@briefs_app.command("build")
def briefs_build_command(
    week: str = typer.Option(None, "--week", help="One ISO week, like 2026-W07 (default: every "
                             "week whose papers or threads changed)."),
    redo: bool = typer.Option(False, "--redo", help="Build every brief again."),
    as_json: bool = common.json_option(),
) -> None:
    """Each topic's week: growth, threads, five to read with why, and a brief of 3-5
    sentences drawn only from the cited abstracts."""
    with common.store() as db, common.progress(quiet=as_json) as show:
        report = Briefs(week=week, redo=redo).run(db, common.settings(), show)
    common.finish(report, as_json)


def brief_violations(db: Any) -> dict[str, Any]:
    """Every stored brief checked against the faithfulness rule (see briefs/check.py)."""
    briefs = list(db.links.iter_briefs())
    cited = sorted({c for b in briefs for s in b["brief"]["sentences"] for c in s["cites"]})
    papers = {p["id"]: p for p in db.papers.iter_papers(ids=cited)}
    found = check_briefs(briefs, papers)
    return {"briefs": len(briefs), "weeks": len({b["week"] for b in briefs}),
            "sentences": sum(len(b["brief"]["sentences"]) for b in briefs),
            "violations": len(found),
            "examples": [{"topic": t, "week": w, "violation": str(v)} for t, w, v in found[:20]]}


@eval_app.command("briefs")
def eval_briefs_command(as_json: bool = common.json_option()) -> None:
    """Check every stored weekly brief: each number and name in a sentence is in an abstract
    it cites, and each cited paper is one of that topic's five to read that week."""
    with common.store() as db:
        result = brief_violations(db)
    common.output(result, as_json, lambda r: common.say(
        f"{r['briefs']:,} briefs over {r['weeks']} weeks, {r['sentences']:,} sentences: "
        f"{r['violations']} violations" + "".join(
            f"\n  {e['topic']} {e['week']}: {e['violation']}" for e in r["examples"])))
    if result["violations"]:
        raise typer.Exit(1)


@eval_app.command("threads")
def eval_threads_command(
    threads: Path = typer.Option(..., "--threads", help="The dev threads: stories/threads-dev.jsonl."),
    papers: Path = typer.Option(..., "--papers", help="The papers: arxiv-2025-2026.jsonl.gz."),
    vectors: Path = typer.Option(None, "--vectors",
                                 help="A matrix of every paper's unit vector (.npy) with --ids; "
                                      "default: embed the papers a decision needs, cached."),
    ids: Path = typer.Option(None, "--ids", help="The ids of the matrix's rows (JSON list)."),
    snapshot: Path = typer.Option(None, "--old-papers",
                                  help="An older snapshot (arxiv-cs-1993-2019) whose common names "
                                       "are old, never a recent paper's artefact."),
    min_similarity: float = typer.Option(
        None, "--min-similarity",
        help="Cosine (plus 0.05 for a shared category) a paper needs to link to an artefact it "
             "names (default 0.55, for all-MiniLM vectors; a risky name needs 0.10 more)."),
    judged: Path = typer.Option(
        None, "--judged", help="Dev pairs a reader judged genuine follow-ups (JSON list of "
                               "[follow-up, origin, name]; docs/links-dev-judged.json)."),
    as_json: bool = common.json_option(),
) -> None:
    """Link recall (a follow-up linked to its origin), precision on the dev pairs, and the
    purity of the threads."""
    settings = common.settings()
    found = load_papers(papers)
    corpus = None
    if vectors is not None and ids is not None:
        source = matrix_source(vectors, ids)
        corpus = lambda: Corpus([p.id for p in found], [p.announced for p in found],  # noqa: E731
                                source([p.id for p in found]))
    else:
        source = EmbeddingCache(found, default_embedder(settings),
                                settings.paths.root / "cache" / "links")
    old_names: dict[str, int] = {}
    if snapshot is not None:
        old_names = learn_old_names(snapshot, settings.paths.root / "cache" / "links" /
                                  f"old-names-{snapshot.name.split('.')[0]}.tsv")
    params = LinkParams()
    if min_similarity is not None:
        params = replace(params, min_similarity=min_similarity,
                         risky_similarity=min_similarity + 0.10)
    result = evaluate_threads(threads, found, source, corpus, old_names, params,
                              judged=load_judged(judged) if judged else None)
    common.output(result, as_json, _print_eval)


def _print_eval(result: dict[str, Any]) -> None:
    say = common.say
    say(f"{result['papers']:,} papers: {result['artefacts']:,} artefacts, {result['links']:,} links "
        f"({result['ambiguous']:,} ambiguous) in {result['link_seconds']} s")
    say(f"dev: {result['dev_threads']} threads, {result['dev_pairs']} pairs, of which "
        f"{result['dev_pairs_using']} only use the name")
    if "recall_judged" in result:
        say(f"recall: {result['recall_judged']:.3f} of the {result['judged_pairs']} pairs judged "
            f"genuine follow-ups ({result['judged_links_wrong']} links to pairs judged wrong)")
    say(f"recall: {result['recall_using']:.3f} of the pairs that use the name, "
        f"{result['recall_all']:.3f} of all pairs")
    say(f"precision on the dev pairs: {result['precision']:.3f} of {result['links_to_dev_origins']} "
        f"links to dev origins within 90 days")
    say(f"collisions kept apart: {result['collisions_kept_apart']:.3f}; origins found: "
        f"{result['origins_found']:.3f}")
    say(f"threads: {result['threads']:,}; purity {result['purity']:.3f} over "
        f"{result['threads_measured']} threads, {result['papers_measured']} placed papers")
