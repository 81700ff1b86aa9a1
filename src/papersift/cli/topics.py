"""Commands of the topics stage: topics build/assign/list/show/trending, eval topics."""

from __future__ import annotations

from dataclasses import replace
from typing import Any

import typer
from rich.markup import escape
from rich.table import Table

from papersift.cli import common
from papersift.cli.app import App, app, eval_app
from papersift.errors import PapersiftError, UsageError
from papersift.latex import readable
from papersift.topics import AssignTopics, BuildParams, BuildTopics, trending, weekly_series
from papersift.topics.evaluate import evaluate_topics

topics_app = App(help="Group papers into stable, labelled topics.", no_args_is_help=True)
app.add_typer(topics_app, name="topics")


def _params(fresh: bool, papers_per_topic: int | None,
            other_similarity: float | None, neighbours: int | None = None) -> BuildParams:
    params = BuildParams(warm_start=not fresh)
    if neighbours is not None:
        if neighbours < 0:
            raise UsageError("--neighbours must be 0 or more")
        params = replace(params, neighbours=neighbours)
    if papers_per_topic is not None:
        if papers_per_topic < 1:
            raise UsageError("--papers-per-topic must be at least 1")
        params = replace(params, papers_per_topic=papers_per_topic)
    if other_similarity is not None:
        if not -1.0 <= other_similarity <= 1.0:
            raise UsageError("--other-similarity must be between -1 and 1")
        params = replace(params, other_similarity=other_similarity)
    return params


@topics_app.command("build")
def build_command(
    fresh: bool = typer.Option(False, "--fresh", help="Cluster from scratch instead of starting "
                               "from the current topics (ids and slugs are still mapped)."),
    papers_per_topic: int = typer.Option(None, "--papers-per-topic",
                                         help="Target topic size (default 2200)."),
    other_similarity: float = typer.Option(
        None, "--other-similarity",
        help="Cosine (of the smoothed vectors) below which a paper goes to 'other' (default 0.5)."),
    neighbours: int = typer.Option(
        None, "--neighbours",
        help="Smooth each paper with this many nearest papers before clustering (default 10; "
             "0 clusters the raw embeddings)."),
    as_json: bool = common.json_option(),
) -> None:
    """Re-cluster every embedded paper; topics that stay substantially the same keep their
    id and slug, retired slugs redirect to where their papers went."""
    stage = BuildTopics(_params(fresh, papers_per_topic, other_similarity, neighbours))
    with common.store() as db, common.progress(quiet=as_json) as show:
        report = stage.run(db, common.settings(), show)
    if not as_json:
        details = report.details
        common.say(f"{details['other_share']:.1%} in other; {len(details['new'])} new, "
                   f"{len(details['retired'])} retired, {len(details['splits'])} splits, "
                   f"{len(details['merges'])} merges")
    common.finish(report, as_json)


@topics_app.command("assign")
def assign_command(
    as_json: bool = common.json_option(),
    engine: str = typer.Option(None, "--engine",
                               help="local (this process) or ray (Ray actors); default: the "
                                    "topics_engine setting."),
) -> None:
    """Give papers that have no topic yet the nearest existing topic (no re-clustering;
    resumable: run again after an interruption)."""
    with common.store() as db, common.progress(quiet=as_json) as show:
        report = AssignTopics(engine=engine).run(db, common.settings(), show)
    common.finish(report, as_json)


@topics_app.command("list")
def list_command(as_json: bool = common.json_option()) -> None:
    """Sections and their topics, largest first."""
    with common.store(readonly=True) as db:
        sections = db.topics.list_sections()
        other = [t for t in db.topics.list_topics() if t["is_other"]]
    if not sections and not as_json:
        raise PapersiftError("no topics yet; run `papersift topics build`")
    common.output({"sections": sections, "other": other[0] if other else None}, as_json,
                  _print_list)


def _print_list(found: dict[str, Any]) -> None:
    sections, other = found["sections"], [found["other"]] if found["other"] else []
    out = common.console
    for section in sections:
        out.print(f"\n[bold]{section['label']}[/bold]  ({section['size']:,} papers, "
                  f"/{section['slug']})", highlight=False)
        for topic in section["topics"]:
            out.print(f"  {topic['size']:>6,}  {escape(topic['label'])}  [dim]{topic['slug']}[/dim]",
                      highlight=False)
    for topic in other:
        out.print(f"\n[bold]{topic['label']}[/bold]  ({topic['size']:,} papers, /{topic['slug']})",
                  highlight=False)


@topics_app.command("show")
def show_command(
    slug: str,
    limit: int = typer.Option(10, "--limit", help="Newest papers to show."),
    as_json: bool = common.json_option(),
) -> None:
    """One topic: label, key phrases, section, papers per week and its newest papers."""
    with common.store(readonly=True) as db:
        topic = db.topics.find_topic(slug.strip().lower())
        if topic is None:
            raise PapersiftError(f"no topic {slug!r}")
        _, papers = db.pages.topic_papers_page(topic["id"], max(0, limit), 0)
        weeks = weekly_series(db, topic["id"])
    common.output(topic | {"weekly": weeks, "papers": papers}, as_json, _print_topic)


def _print_topic(topic: dict[str, Any]) -> None:
    out = common.console
    if topic.get("redirected_from"):
        common.say(f"{topic['redirected_from']} now redirects here ({topic.get('redirect_reason')})")
    common.say(f"{topic['label']}  /{topic['slug']}  {topic['size']:,} papers")
    if topic["key_phrases"]:
        common.say("key phrases: " + ", ".join(topic["key_phrases"]))
    if topic.get("section_label"):
        common.say(f"section: {topic['section_label']}")
    weeks = topic["weekly"]
    if weeks:
        out.print("papers per week (last 8): " + " ".join(
            f"{w['week'][5:]}:{w['papers']}" for w in weeks[-8:]), highlight=False)
    for paper in topic["papers"]:
        common.say(f"  {paper['sort_date'] or '?'}  {paper['id']}  {readable(paper['title'])}")


@topics_app.command("trending")
def trending_command(
    weeks: int = typer.Option(4, "--weeks", help="Weeks before this one to compare with."),
    limit: int = typer.Option(10, "--limit"),
    as_json: bool = common.json_option(),
) -> None:
    """Topics growing fastest in the newest week against their previous weeks."""
    if weeks < 1:
        raise UsageError("--weeks must be at least 1")
    with common.store(readonly=True) as db:
        rows = trending(db, weeks=weeks, limit=limit)
    common.output(rows, as_json, lambda _: _print_trending(rows, weeks))


def _print_trending(rows: list[dict[str, Any]], weeks: int) -> None:
    table = Table()
    for column in ("topic", "this week", f"mean of {weeks} before", "growth"):
        table.add_column(column)
    for row in rows:
        table.add_row(row["label"], str(row["this_week"]), f"{row['weekly_mean_before']:.1f}",
                      f"{row['growth']:.2f}x")
    common.console.print(table)


@eval_app.command("topics")
def eval_topics_command(
    stability: bool = typer.Option(True, "--stability/--no-stability",
                                   help="Hold out the newest week, build, add it, rebuild."),
    baseline: bool = typer.Option(True, "--baseline/--no-baseline",
                                  help="Also score k-means k=50 on the same embeddings."),
    as_json: bool = common.json_option(),
) -> None:
    """NMI/ARI against arXiv primary categories, share in other, label checks, stability."""
    with common.store() as db:
        result = evaluate_topics(
            db, common.settings(), with_stability=stability, with_baseline=baseline,
            on_progress=None if as_json else common.say)
    common.output(result, as_json, _print_eval)


def _print_eval(result: dict[str, Any]) -> None:
    out = common.console
    agree = result["vs_primary_category"]
    out.print(f"{result['topics']} topics, {result['sections']} sections, {result['papers']:,} "
              f"papers, {result['other_share']:.1%} in other", highlight=False)
    inside = result["vs_primary_category_excluding_other"]
    out.print(f"vs primary category: NMI {agree['nmi']:.3f}, ARI {agree['ari']:.3f} "
              f"(papers in topics only: NMI {inside['nmi']:.3f}, ARI {inside['ari']:.3f})",
              highlight=False)
    if "baseline_kmeans50" in result:
        base = result["baseline_kmeans50"]
        out.print(f"baseline k-means k=50: NMI {base['nmi']:.3f}, ARI {base['ari']:.3f}",
                  highlight=False)
    labels = result["labels"]
    out.print(f"labels: {labels['problems']} rule violations, {labels['mean_phrases']} phrases "
              "per topic", highlight=False)
    for example in labels["examples"]:
        out.print(f"  {example}", highlight=False, markup=False)
    if "stability" in result:
        s = result["stability"]
        out.print(f"stability: {s['stability']:.3f} of {s['papers']:,} papers keep their topic "
                  f"when {s['held_out']:,} papers (from {s['held_out_from']}) are added",
                  highlight=False)
