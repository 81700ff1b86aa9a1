"""Commands for readers: readers add/list/remove/invite/follow/feed, and eval recommend."""

from __future__ import annotations

import secrets
import sys
from pathlib import Path
from typing import Any

import typer

from papersift.cli import common
from papersift.cli.app import App, app, eval_app
from papersift.delivery.welcome import send_password_link
from papersift.errors import PapersiftError, UsageError
from papersift.latex import readable
from papersift.readers import accounts, signals
from papersift.recommend.evaluate import evaluate_recommend
from papersift.recommend.feed import build_feed

readers_app = App(help="Readers' accounts, what they follow, and their feeds.",
                  no_args_is_help=True)
app.add_typer(readers_app, name="readers")


def _password(prompt: bool) -> str:
    """The new password: typed twice at a terminal, else the first line of stdin."""
    if prompt and sys.stdin.isatty():
        first = typer.prompt("Password", hide_input=True)
        if typer.prompt("Again", hide_input=True) != first:
            raise UsageError("the two passwords differ")
        return str(first)
    line = sys.stdin.readline().rstrip("\n")
    if not line:
        raise UsageError("give the password on stdin (echo ... | papersift readers add NAME)")
    return line


@readers_app.command("add")
def add_command(name: str, email: str = typer.Option(None, "--email", help="For digests."),
                send_link: bool = typer.Option(
                    False, "--send-link", help="Email a link to choose a password (needs "
                    "--email and the smtp_* settings) instead of reading one from stdin."),
                as_json: bool = common.json_option()) -> None:
    """Make a reader's account; the password is read from stdin (or asked at a terminal)."""
    if send_link and not email:
        raise UsageError("--send-link needs --email")
    # With --send-link nobody knows the first password: the reader chooses one by the link.
    password = secrets.token_urlsafe(32) if send_link else _password(prompt=not as_json)
    with common.store() as db:
        reader_id = accounts.add_reader(db, name, password, email)
        reader = db.readers.get_reader(reader_id)
        if send_link:
            try:
                send_password_link(common.settings(), reader)
            except PapersiftError:
                db.readers.remove_reader(reader_id)  # no half-made account
                raise
    common.output(reader, as_json, lambda r: common.say(
        f"added reader {r['name']}" + (f"; a link to choose a password went to {email}"
                                       if send_link else "")))


@readers_app.command("list")
def list_command(as_json: bool = common.json_option()) -> None:
    """Every reader, with when they were last seen."""
    with common.store(readonly=True) as db:
        rows = db.readers.list_readers()
    common.output(rows, as_json, _print_readers)


def _print_readers(rows: list[dict[str, Any]]) -> None:
    table = common.figures_table(f"{len(rows)} readers", ("name", "email", "since", "last seen"))
    for row in rows:
        table.add_row(row["name"], row["email"] or "", row["created_at"][:10],
                      (row["last_seen_at"] or "never")[:10])
    common.console.print(table)


@readers_app.command("remove")
def remove_command(name: str, as_json: bool = common.json_option()) -> None:
    """Delete a reader and everything that is theirs."""
    with common.store() as db:
        reader = accounts.reader_named(db, name)
        db.readers.remove_reader(reader["id"])
    common.output({"removed": reader["name"]}, as_json,
                  lambda r: common.say(f"removed {r['removed']} and all their data"))


@readers_app.command("invite")
def invite_command(as_json: bool = common.json_option()) -> None:
    """A one-time sign-up code (for signup = invite), valid 14 days."""
    with common.store() as db:
        code = accounts.invite(db)
    common.output({"code": code}, as_json, lambda r: print(r["code"]))


@readers_app.command("follow")
def follow_command(name: str, target: str = typer.Argument(
        ..., help="topic:SLUG, section:SLUG, author:SLUG, category:cs.LG or search:\"QUERY\""),
        as_json: bool = common.json_option()) -> None:
    """Make a reader follow a topic, section, author, category or saved search."""
    with common.store() as db:
        reader = accounts.reader_named(db, name)
        kind, value = signals.follow(db, reader["id"], target)
    common.output({"reader": reader["name"], "kind": kind, "value": value}, as_json,
                  lambda r: common.say(f"{r['reader']} follows {r['kind']}:{r['value']}"))


@readers_app.command("feed")
def feed_command(name: str, as_json: bool = common.json_option()) -> None:
    """A reader's ranked feed for today, with the reasons for each paper (marks nothing shown)."""
    with common.store() as db:
        reader = accounts.reader_named(db, name)
        feed = build_feed(db, common.settings(), db.readers.get_reader(reader["id"]))
        titles = db.pages.listing_by_ids([i["paper_id"] for i in feed.items])
    items = [dict(i, title=readable(titles[i["paper_id"]]["title"])) for i in feed.items
             if i["paper_id"] in titles]
    common.output({"items": items, "interests": feed.interests, "window": feed.window},
                  as_json, _print_feed)


def _print_feed(feed: dict[str, Any]) -> None:
    for rank, entry in enumerate(feed["items"], 1):
        slot = "" if entry["slot"] == "ranked" else f" [{entry['slot']}]"
        common.say(f"{rank:>2}. {entry['title']}{slot}")
        for reason in entry["reasons"]:
            common.say(f"      - {reason['text']}")


@eval_app.command("recommend")
def eval_recommend_command(
    readers: Path = typer.Option(..., "--readers", help="The task: recommend/readers-dev.jsonl."),
    papers: Path = typer.Option(..., "--papers", help="The papers: arxiv-2025-2026.jsonl.gz."),
    feedback_readers: int = typer.Option(100, "--feedback-readers",
                                         help="Readers sampled to measure feedback entries."),
    negatives: int = typer.Option(5000, "--negatives", min=10,
                                  help="Random earlier papers the baselines learn against."),
    as_json: bool = common.json_option(),
) -> None:
    """nDCG@10, Recall@50 and MRR of our ranker beside three public ones (same embeddings),
    and how "more:", "less:" and "exclude:" entries move the top 20."""
    with common.progress(quiet=as_json) as show:
        result = evaluate_recommend(readers, papers, common.settings(), feedback_readers, show,
                                    negatives)
    # --json: one row per ranker, then the feedback measure as a row of its own.
    rows = [*result["rows"], {"config": "papersift:feedback", **result["feedback"]}]
    common.output(rows if as_json else result, as_json, _print_eval)


def _print_eval(result: dict[str, Any]) -> None:
    table = common.figures_table(
        f"recommendation on {result['readers']} readers, {result['candidates']:,} candidates",
        ("ranker", "nDCG@10", "Recall@50", "MRR"))
    for row in result["rows"]:
        table.add_row(row["config"], f"{row['ndcg@10']:.4f}", f"{row['recall@50']:.4f}",
                      f"{row['mrr']:.4f}")
    common.console.print(table)
    fb = result["feedback"]
    if fb.get("readers"):
        common.say(f"feedback on {fb['readers']} readers: more: X {fb['x_before']:.1%} -> "
                   f"{fb['x_more']:.1%} of the top 20 ({fb['more_points']:+.1f} points); less: Y "
                   f"{fb['y_before']:.1%} -> {fb['y_less']:.1%}; exclude: Y -> "
                   f"{fb['y_exclude']:.1%}")
