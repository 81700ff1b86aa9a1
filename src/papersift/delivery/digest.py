"""Email digests: who is due, the best of their feed since their last digest, a plain-text and HTML message with one-click links, sent and recorded only once accepted.

Safe from cron and from `serve --digest-at`: a reader's digest of a day is recorded
(pending) before it is sent and marked sent once the SMTP server accepted it, so a run
killed midway, or a server that refused, is finished by the next run with the same papers
and the same Message-ID; a paper sent once is never sent again. Runs that overlap claim
each digest before sending it (`claim_digest`), so no reader gets a day's digest twice.
"""

from __future__ import annotations

import os
import secrets
import socket
import time
from dataclasses import dataclass
from datetime import UTC, date, datetime, timedelta
from email.message import EmailMessage
from email.utils import format_datetime
from typing import Any
from urllib.parse import urlsplit

from papersift.delivery.links import make_link
from papersift.delivery.render import render_digest
from papersift.delivery.smtp import Mailer, SendError
from papersift.delivery.weekly import week_section
from papersift.errors import PapersiftError
from papersift.latex import readable
from papersift.readers.accounts import reader_named
from papersift.recommend.feed import build_feed
from papersift.settings import Settings
from papersift.stages import OnProgress, Progress, Report, no_progress
from papersift.store import Store
from papersift.web import urls
from papersift.web.urls import absolute

MAX_CATCH_UP_DAYS = 30  # a reader back after months gets the best of the last month
# A run claims each digest before sending it, for at least this long (4 SMTP timeouts if
# longer): overlapping runs skip it, and a run killed mid-send frees it when the time is up.
CLAIM_SECONDS = 600


def _claimant() -> str:
    """Who holds a claim (for the curious: the claim's time is what counts)."""
    return f"{socket.gethostname()}:{os.getpid()}:{secrets.token_hex(4)}"
WEEKDAYS = ("mon", "tue", "wed", "thu", "fri", "sat", "sun")


@dataclass
class Composed:
    """A digest ready to send: its papers and the message."""

    papers: list[str]
    message: EmailMessage


def is_due(settings_row: dict[str, Any], day: date) -> bool:
    if settings_row["paused"] or settings_row["schedule"] == "off":
        return False
    return settings_row["schedule"] == "daily" or WEEKDAYS[day.weekday()] in settings_row["days"]


def _window_days(last_sent_at: str | None, day: date, settings: Settings) -> int:
    """Days of papers a digest ranks: since the last one, at most MAX_CATCH_UP_DAYS."""
    if not last_sent_at:
        return int(settings.feed_days)
    since = (day - date.fromisoformat(last_sent_at[:10])).days
    return max(1, min(MAX_CATCH_UP_DAYS, since))


def _iso(moment: datetime) -> str:
    return moment.strftime("%Y-%m-%dT%H:%M:%SZ")


def message_id(settings: Settings, reader_id: int, day: str) -> str:
    """Stable for a reader's day: a retried digest is the same message to mail clients."""
    host = urlsplit(settings.base_url).hostname or "papersift.local"
    return f"<digest-{reader_id}-{day}@{host}>"


def compose(store: Store, settings: Settings, reader: dict[str, Any], day: date,
            last_sent_at: str | None, papers: list[str] | None = None) -> Composed | None:
    """The reader's digest of `day`: these papers (a retry), else the top of their feed over
    the days since their last digest, never a paper sent before; None if there is nothing."""
    ranked = {}
    if papers is None:
        window_settings = settings.replace(
            feed_days=_window_days(last_sent_at, day, settings),
            feed_size=max(1, int(settings.digest_size)))
        feed = build_feed(store, window_settings, reader,
                          now=datetime(day.year, day.month, day.day, tzinfo=UTC),
                          exclude=frozenset(store.delivery.sent_paper_ids(reader["id"])))
        ranked = {item["paper_id"]: item for item in feed.items}
        papers = list(ranked)
    if not papers:
        return None
    rows = store.pages.listing_by_ids(papers)
    entries = [_entry(settings, reader, rows[p], ranked.get(p)) for p in papers if p in rows]
    if not entries:
        return None
    unsubscribe = make_link(settings, reader, "unsubscribe")
    text, html = render_digest(settings, reader, day, entries, unsubscribe,
                               week_section(store, settings, reader["id"], day))
    return Composed([e["id"] for e in entries],
                    _message(settings, reader, day, text, html, unsubscribe, len(entries)))


def _entry(settings: Settings, reader: dict[str, Any], row: dict[str, Any],
           ranked: dict[str, Any] | None) -> dict[str, Any]:
    summary = row.get("summary") or {}
    return {
        "id": row["id"], "title": readable(row["title"]),
        "authors": ", ".join(a["name"] for a in row["lead_authors"])
        + (" et al." if row["n_authors"] > len(row["lead_authors"]) else ""),
        "blurb": summary.get("blurb") or " ".join(readable(row["abstract"]).split()[:60]) + " …",
        "url": absolute(settings, urls.paper(row["id"])),
        "arxiv": f"https://arxiv.org/abs/{row['id']}",
        "reasons": [r["text"] for r in (ranked or {}).get("reasons", [])][:3],
        "links": {action: make_link(settings, reader, action, row["id"])
                  for action in ("up", "down", "not_interested")},
    }


def _message(settings: Settings, reader: dict[str, Any], day: date, text: str, html: str,
             unsubscribe: str, count: int) -> EmailMessage:
    message = EmailMessage()
    message["From"] = settings.mail_from
    message["To"] = reader["email"] or "undisclosed-recipients:;"  # a preview has no address
    noun = "paper" if count == 1 else "papers"
    message["Subject"] = f"{settings.site_title}: {count} {noun} for you, {day:%-d %B}"
    message["Date"] = format_datetime(datetime.now(UTC))
    message["Message-ID"] = message_id(settings, reader["id"], day.isoformat())
    message["List-Unsubscribe"] = f"<{unsubscribe}>"
    message["List-Unsubscribe-Post"] = "List-Unsubscribe=One-Click"
    message["Auto-Submitted"] = "auto-generated"
    message.set_content(text)
    message.add_alternative(html, subtype="html")
    return message


def _targets(store: Store, reader_name: str | None, day: date) -> list[dict[str, Any]]:
    """The recipients to consider: everyone due today, or the one reader asked for."""
    everyone = store.delivery.digest_recipients()
    if reader_name is None:
        return [r for r in everyone if is_due(r["settings"], day)]
    reader = reader_named(store, reader_name)
    found = next((r for r in everyone if r["reader"]["id"] == reader["id"]), None)
    if found is None:
        raise PapersiftError(f"{reader['name']} has no email address: nothing to send")
    if found["settings"]["paused"] or found["settings"]["schedule"] == "off":
        raise PapersiftError(f"{reader['name']} has digests paused or off: nothing sent")
    return [found]


def send_digests(store: Store, settings: Settings, reader_name: str | None = None,
                 now: datetime | None = None, on_progress: OnProgress = no_progress
                 ) -> Report:
    """Send the digests due (or one reader's); a failed send is kept for the next run."""
    started = time.perf_counter()
    day = (now or datetime.now(UTC)).date()
    targets = _targets(store, reader_name, day)
    report = Report(stage="digest", counts={"sent": 0, "failed": 0, "empty": 0, "already": 0})
    mailer = Mailer(settings)
    try:
        for done, target in enumerate(targets, 1):
            _send_one(store, settings, mailer, target, day, report)
            on_progress(Progress("digest", done, len(targets)))
    finally:
        mailer.close()
    report.seconds = time.perf_counter() - started
    return report


def _send_one(store: Store, settings: Settings, mailer: Mailer, target: dict[str, Any],
              day: date, report: Report) -> None:
    reader = target["reader"]
    earlier = next((d for d in store.delivery.digests_of(reader["id"])
                    if d["day"] == day.isoformat()), None)
    if earlier is not None and earlier["status"] == "sent":
        report.counts["already"] += 1
        return
    composed = compose(store, settings, reader, day, target["last_sent_at"],
                       earlier["papers"] if earlier else None)
    if composed is None:
        report.counts["empty"] += 1  # never an empty digest
        return
    digest = store.delivery.start_digest(reader["id"], day.isoformat(),
                                         composed.message["Message-ID"], composed.papers)
    now = datetime.now(UTC)
    lease = now + timedelta(seconds=max(CLAIM_SECONDS, 4 * float(settings.smtp_timeout)))
    if not store.delivery.claim_digest(digest["id"], _claimant(), _iso(lease), _iso(now)):
        report.counts["already"] += 1  # another run sends it, or has sent it
        return
    if digest["papers"] != composed.papers:  # another run recorded this day's digest first
        composed = compose(store, settings, reader, day, target["last_sent_at"],
                           digest["papers"])
        if composed is None:
            store.delivery.mark_digest_failed(digest["id"], "its papers are no longer stored")
            report.counts["empty"] += 1
            return
    try:
        mailer.send(composed.message)
    except SendError as exc:
        store.delivery.mark_digest_failed(digest["id"], str(exc))
        report.counts["failed"] += 1
        report.failures.append({"source": reader["name"], "error": str(exc)})
        return
    sent_at = _iso(datetime.now(UTC))
    store.delivery.mark_digest_sent(digest["id"], sent_at)
    store.readers.mark_shown(reader["id"], composed.papers, sent_at)
    report.counts["sent"] += 1
