"""Commands of the topics stage: topics build/assign/list/show/trending, eval topics."""

from __future__ import annotations

from dataclasses import replace
from typing import TYPE_CHECKING

import typer
from rich.table import Table

from papersift.cli import common
from papersift.cli.app import app, eval_app

if TYPE_CHECKING:
    from papersift.topics import BuildParams

topics_app = typer.Typer(help="Group papers into stable, labelled topics.", no_args_is_help=True)
app.add_typer(topics_app, name="topics")


def _params(fresh: bool, papers_per_topic: int | None,
            other_similarity: float | None, neighbours: int | None = None) -> BuildParams:
    from papersift.topics import BuildParams

    params = BuildParams(warm_start=not fresh)
    if neighbours is not None:
        if neighbours < 0:
            raise common.fail("--neighbours must be 0 or more", common.EXIT_USAGE)
        params = replace(params, neighbours=neighbours)
    if papers_per_topic is not None:
        if papers_per_topic < 1:
            raise common.fail("--papers-per-topic must be at least 1", common.EXIT_USAGE)
        params = replace(params, papers_per_topic=papers_per_topic)
    if other_similarity is not None:
        if not -1.0 <= other_similarity <= 1.0:
            raise common.fail("--other-similarity must be between -1 and 1", common.EXIT_USAGE)
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
    as_json: bool = typer.Option(False, "--json", help="Print the build report as JSON."),
) -> None:
    """Re-cluster every embedded paper; topics that stay substantially the same keep their
    id and slug, retired slugs redirect to where their papers went."""
    from papersift.topics import TopicsError, build_topics

    params = _params(fresh, papers_per_topic, other_similarity, neighbours)
    with common.store() as db:
        try:
            report = build_topics(
                db, common.settings(), params=params,
                on_progress=None if as_json else lambda m: common.console.print(m, highlight=False))
        except TopicsError as exc:
            raise common.fail(str(exc)) from None
    if as_json:
        common.emit_json(report)
        return
    common.console.print(
        f"[bold]{report['topics']}[/bold] topics in {report['sections']} sections over "
        f"{report['papers']:,} papers ({report['other_share']:.1%} in other); kept "
        f"{report['kept']}, new {len(report['new'])}, retired {len(report['retired'])}, "
        f"{len(report['splits'])} splits, {len(report['merges'])} merges; "
        f"{report['seconds_total']:.1f}s", highlight=False)


@topics_app.command("assign")
def assign_command(as_json: bool = typer.Option(False, "--json")) -> None:
    """Give papers that have no topic yet the nearest existing topic (no re-clustering)."""
    from papersift.topics import TopicsError, assign_topics

    with common.store() as db:
        try:
            report = assign_topics(db, common.settings())
        except TopicsError as exc:
            raise common.fail(str(exc)) from None
    if as_json:
        common.emit_json(report)
        return
    common.console.print(f"assigned {report['assigned']:,} papers ({report['to_other']:,} to "
                         f"other) in {report['seconds']:.2f}s", highlight=False)


@topics_app.command("list")
def list_command(as_json: bool = typer.Option(False, "--json")) -> None:
    """Sections and their topics, largest first."""
    with common.store(readonly=True) as db:
        sections = db.list_sections()
        other = [t for t in db.list_topics() if t["is_other"]]
    if as_json:
        common.emit_json({"sections": sections, "other": other[0] if other else None})
        return
    if not sections:
        raise common.fail("no topics yet; run `papersift topics build`")
    out = common.console
    for section in sections:
        out.print(f"\n[bold]{section['label']}[/bold]  ({section['size']:,} papers, "
                  f"/{section['slug']})", highlight=False)
        for topic in section["topics"]:
            out.print(f"  {topic['size']:>6,}  {topic['name']}  [dim]{topic['slug']}[/dim]",
                      highlight=False)
    for topic in other:
        out.print(f"\n[bold]{topic['label']}[/bold]  ({topic['size']:,} papers, /{topic['slug']})",
                  highlight=False)


@topics_app.command("show")
def show_command(
    slug: str,
    limit: int = typer.Option(10, "--limit", help="Newest papers to show."),
    as_json: bool = typer.Option(False, "--json"),
) -> None:
    """One topic: label, key phrases, section, papers per week and its newest papers."""
    from papersift.topics import weekly_series

    with common.store(readonly=True) as db:
        topic = db.get_topic(slug.strip().lower())
        if topic is None:
            raise common.fail(f"no topic {slug!r}")
        papers = db.topic_papers(topic["id"], 0, max(0, limit))
        weeks = weekly_series(db, topic["id"])
    if as_json:
        common.emit_json(topic | {"weekly": weeks, "papers": papers})
        return
    out = common.console
    if topic.get("redirected_from"):
        out.print(f"{slug} now redirects here ({topic.get('redirect_reason')})", highlight=False)
    out.print(f"[bold]{topic['name']}[/bold]  /{topic['slug']}  {topic['size']:,} papers",
              highlight=False)
    if topic["key_phrases"]:
        out.print("key phrases: " + ", ".join(topic["key_phrases"]), highlight=False)
    if topic.get("section_label"):
        out.print(f"section: {topic['section_label']}", highlight=False)
    if weeks:
        out.print("papers per week (last 8): " + " ".join(
            f"{w['week'][5:]}:{w['papers']}" for w in weeks[-8:]), highlight=False)
    for paper in papers:
        out.print(f"  {paper['sort_date'] or '?'}  {paper['id']}  {paper['title']}",
                  highlight=False, markup=False)


@topics_app.command("trending")
def trending_command(
    weeks: int = typer.Option(4, "--weeks", help="Weeks before this one to compare with."),
    limit: int = typer.Option(10, "--limit"),
    as_json: bool = typer.Option(False, "--json"),
) -> None:
    """Topics growing fastest in the newest week against their previous weeks."""
    from papersift.topics import trending

    if weeks < 1:
        raise common.fail("--weeks must be at least 1", common.EXIT_USAGE)
    with common.store(readonly=True) as db:
        rows = trending(db, weeks=weeks, limit=limit)
    if as_json:
        common.emit_json(rows)
        return
    table = Table()
    for column in ("topic", "this week", f"mean of {weeks} before", "growth"):
        table.add_column(column)
    for row in rows:
        table.add_row(row["name"], str(row["this_week"]), f"{row['weekly_mean_before']:.1f}",
                      f"{row['growth']:.2f}x")
    common.console.print(table)


@eval_app.command("topics")
def eval_topics_command(
    stability: bool = typer.Option(True, "--stability/--no-stability",
                                   help="Hold out the newest week, build, add it, rebuild."),
    baseline: bool = typer.Option(True, "--baseline/--no-baseline",
                                  help="Also score k-means k=50 on the same embeddings."),
    as_json: bool = typer.Option(False, "--json"),
) -> None:
    """NMI/ARI against arXiv primary categories, share in other, label checks, stability."""
    from papersift.topics import TopicsError
    from papersift.topics.evaluate import evaluate_topics

    with common.store() as db:
        try:
            result = evaluate_topics(
                db, common.settings(), with_stability=stability, with_baseline=baseline,
                on_progress=None if as_json else lambda m: common.console.print(m, highlight=False))
        except TopicsError as exc:
            raise common.fail(str(exc)) from None
    if as_json:
        common.emit_json(result)
        return
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
