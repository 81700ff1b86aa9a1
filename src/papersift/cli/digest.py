"""Commands of the email digest: digest send (safe from cron) and digest preview."""

from __future__ import annotations

import re
import threading
import time
from datetime import UTC, datetime, timedelta

import typer

from papersift.cli import common
from papersift.cli.app import App, app
from papersift.delivery.digest import compose, send_digests
from papersift.errors import PapersiftError, UsageError
from papersift.readers.accounts import reader_named

digest_app = App(help="Email digests of readers' feeds.", no_args_is_help=True)
app.add_typer(digest_app, name="digest")
_AT = re.compile(r"^([01]?\d|2[0-3]):([0-5]\d)$")


@digest_app.command("send")
def send_command(
    reader: str = typer.Option(None, "--reader", help="Only this reader (whatever the schedule)."),
    as_json: bool = common.json_option(),
) -> None:
    """Send every digest due today (a failed one is tried again by the next run).

    Exit codes: 0 done, 1 a digest failed (it is kept and retried), 2 usage error.
    """
    with common.store() as db, common.progress(quiet=as_json) as show:
        report = send_digests(db, common.settings(), reader, on_progress=show)
    common.finish(report, as_json)


@digest_app.command("preview")
def preview_command(
    name: str,
    html: bool = typer.Option(False, "--html", help="The HTML part instead of the text."),
) -> None:
    """What the reader's digest would hold today (nothing is sent or recorded)."""
    with common.store() as db:
        reader = reader_named(db, name)
        found = next((r for r in db.delivery.digest_recipients()
                      if r["reader"]["id"] == reader["id"]), None)
        last = found["last_sent_at"] if found else None
        composed = compose(db, common.settings(), dict(reader, email=reader["email"] or ""),
                           datetime.now(UTC).date(), last)
    if composed is None:
        raise PapersiftError(f"{reader['name']} has no new papers for a digest today")
    part = composed.message.get_body(("html",) if html else ("plain",))
    print(part.get_content())


def parse_at(text: str) -> tuple[int, int]:
    """'07:00' -> (7, 0): the time of day (UTC) `serve --digest-at` sends at."""
    match = _AT.match(text or "")
    if not match:
        raise UsageError(f"--digest-at wants a time of day like 07:00 (UTC), not {text!r}")
    return int(match.group(1)), int(match.group(2))


def start_digest_clock(at: tuple[int, int]) -> None:
    """A thread of `serve --digest-at`: sends the day's digests at that time every day."""
    def loop() -> None:
        while True:
            now = datetime.now(UTC)
            due = now.replace(hour=at[0], minute=at[1], second=0, microsecond=0)
            if due <= now:
                due += timedelta(days=1)
            time.sleep((due - now).total_seconds())
            try:
                with common.store() as db:
                    report = send_digests(db, common.settings())
                common.say(f"digests: {report.line()}")
            except Exception as exc:  # keep serving; tomorrow's run (or cron) tries again
                common.say(f"digests failed: {exc}")

    threading.Thread(target=loop, name="papersift-digest", daemon=True).start()
