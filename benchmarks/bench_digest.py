"""Email digests of 1,000 readers to a local SMTP server: wall time and peak memory.

    PYTHONPATH=. .venv/bin/python benchmarks/bench_digest.py --data-dir COPY --readers 1000

COPY is a copy of a store with every recent paper embedded (readers are added to it).
The SMTP server (aiosmtpd, the tests' own) runs in this process on 127.0.0.1.
"""

from __future__ import annotations

import argparse
import json
import os
import resource
import statistics
import sys
import time
from datetime import UTC, datetime, timedelta
from pathlib import Path

sys.path.insert(0, str(Path(__file__).resolve().parent))

from tests.smtp_server import SmtpServer  # noqa: E402

from bench_recommend import make_readers  # noqa: E402
from papersift.delivery.digest import send_digests  # noqa: E402
from papersift.settings import load_settings  # noqa: E402
from papersift.store import open_store  # noqa: E402


def _first_free_day(store, reader: int) -> datetime:  # noqa: ANN001
    """Today, or the day after this reader's newest digest (a store reused by an earlier run
    has digests of those days: each would be found made, not sent again)."""
    now = datetime.now(UTC)
    made = store.delivery.digests_of(reader)
    if made and made[0]["day"] >= now.date().isoformat():
        return datetime.fromisoformat(made[0]["day"]).replace(
            tzinfo=UTC, hour=now.hour, minute=now.minute) + timedelta(days=1)
    return now


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__.split("\n")[0])
    parser.add_argument("--data-dir", type=Path, required=True)
    parser.add_argument("--readers", type=int, default=1000)
    parser.add_argument("--runs", type=int, default=3)
    args = parser.parse_args()
    runs = []
    with SmtpServer() as smtp:
        settings = load_settings(data_dir=str(args.data_dir), threads=2, **smtp.settings(
            smtp_timeout=30.0))
        with open_store(settings) as store:
            readers = make_readers(store, args.readers, prefix="digest", email=True)
            first = _first_free_day(store, readers[0])
            for run in range(args.runs):
                # Each run is a new day: every reader is due again, with papers not yet sent.
                day = first + timedelta(days=run)
                smtp.inbox.messages.clear()
                started, cpu = time.perf_counter(), time.process_time()
                report = send_digests(store, settings, now=day)
                seconds = time.perf_counter() - started
                # CPU includes the SMTP server's thread (it runs in this process).
                runs.append({"seconds": round(seconds, 1),
                             "cpu_seconds": round(time.process_time() - cpu, 1),
                             "load": round(os.getloadavg()[0], 1), **report.counts,
                             "received": len(smtp.inbox.messages)})
                print(f"run {run + 1}: {runs[-1]}", file=sys.stderr, flush=True)
    peak_mb = resource.getrusage(resource.RUSAGE_SELF).ru_maxrss / 1024
    print(json.dumps({"runs": runs, "median_seconds": statistics.median(r["seconds"] for r in runs),
                      "peak_mb": round(peak_mb), "load": os.getloadavg()[0],
                      "date": time.strftime("%Y-%m-%d %H:%M UTC", time.gmtime())}, indent=2))


if __name__ == "__main__":
    main()
