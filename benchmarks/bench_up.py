"""The main job as a newcomer meets it: `papersift up --limit N` into a fresh data dir, timed to serving.

    .venv/bin/python benchmarks/bench_up.py up [--limit 5000] [--runs 1] [--json]
    .venv/bin/python benchmarks/bench_up.py embed-gap [--n 2000] [--runs 3]

`up`: runs `papersift up --source file:<recent file> --limit N --port P` in a new data dir
(so the model is exported too, as on a fresh clone with install done) on a terminal-less
stderr, and records the seconds until the site answers, each stage's seconds (from its
lines), every line the terminal would show that is not progress or a result (warnings
should go to the log file), the resident memory of the serving process after the front page,
a paper page and a semantic search have been served (VmRSS and VmHWM of /proc), and whether
PyTorch is loaded in it. The load average is recorded before and after each run.

`embed-gap`: where the embedding time of `up` goes. Interleaved in one process with one
embedder: the benchmark's way (one `embed()` call over N abstracts) and the embed stage over
a store holding the same N papers (it reads, hashes, embeds in chunks and writes vectors),
with the stage's time split into the encoder's and the rest.
"""

from __future__ import annotations

import argparse
import gzip
import itertools
import json
import os
import re
import shutil
import signal
import socket
import statistics
import subprocess
import sys
import tempfile
import time
from pathlib import Path
from typing import Any

import httpx

ROOT = Path(__file__).resolve().parents[1]
SHARED = Path(os.environ.get("PAPERSIFT_SHARED_DATA", ROOT / ".." / "shared" / "data"))
RECENT = SHARED / "arxiv-2025-2026.jsonl.gz"
PAPERSIFT = Path(sys.executable).with_name("papersift")
_RESULT = re.compile(r"^[✓✗–] (\w+) \((\d+(?:\.\d+)?)s\)")
_PROGRESS = re.compile(r"^[\w ]+(?:: [^:]*)?: [\d,]+(?:/[\d,]+)?(?: \(.*\))?")


def free_port() -> int:
    with socket.socket() as sock:
        sock.bind(("127.0.0.1", 0))
        return int(sock.getsockname()[1])


def proc_memory(pid: int) -> dict[str, float]:
    """VmRSS and VmHWM (peak) of a process, in MB."""
    found = {}
    for line in Path(f"/proc/{pid}/status").read_text().splitlines():
        key, _, value = line.partition(":")
        if key in ("VmRSS", "VmHWM"):
            found[key] = int(value.split()[0]) / 1024
    return found


def torch_loaded(pid: int) -> bool:
    maps = Path(f"/proc/{pid}/maps").read_text()
    return "libtorch" in maps


def _serve_requests(base: str) -> None:
    with httpx.Client(base_url=base, timeout=60) as client:
        front = client.get("/", params={"format": "json"}).json()
        client.get("/").raise_for_status()
        if front.get("papers"):
            client.get(front["papers"][0]["url"]).raise_for_status()
        client.get("/search", params={"q": "language model reasoning", "mode": "semantic"})


def one_up(limit: int, keep: bool) -> dict[str, Any]:
    data = Path(tempfile.mkdtemp(prefix="papersift-up-"))
    port = free_port()
    env = dict(os.environ, PAPERSIFT_DATA_DIR=str(data), HF_HUB_OFFLINE="1")
    env.pop("PAPERSIFT_CONFIG", None)
    log = data.parent / f"{data.name}.stderr"
    load_before = os.getloadavg()
    started = time.perf_counter()
    with log.open("w") as stderr:
        # A new session, so that stopping it stops the export child and uvicorn with it.
        child = subprocess.Popen(
            [str(PAPERSIFT), "up", "--source", f"file:{RECENT}", "--limit", str(limit),
             "--port", str(port)], stdout=subprocess.DEVNULL, stderr=stderr, env=env,
            cwd=data, start_new_session=True)
    base = f"http://127.0.0.1:{port}"
    serving = None
    try:
        while child.poll() is None and time.perf_counter() - started < 1800:
            try:
                if httpx.get(base + "/", timeout=2).status_code == 200:
                    serving = time.perf_counter() - started
                    break
            except httpx.HTTPError:
                pass
            time.sleep(0.5)
        memory: dict[str, float] = {}
        torch = None
        if serving is not None:
            _serve_requests(base)
            memory = proc_memory(child.pid)
            torch = torch_loaded(child.pid)
    finally:
        if child.poll() is None:
            os.killpg(child.pid, signal.SIGINT)
            try:
                child.wait(timeout=30)
            except subprocess.TimeoutExpired:
                os.killpg(child.pid, signal.SIGKILL)
                child.wait()
    lines = [line.rstrip() for line in log.read_text().splitlines() if line.strip()]
    stages = {m.group(1): float(m.group(2)) for line in lines if (m := _RESULT.match(line))}
    other = [line for line in lines if not _RESULT.match(line) and not _PROGRESS.match(line)
             and not line.startswith(("serving ", "  ", "5,000 papers", f"{limit:,} papers"))]
    result = {"seconds_to_serving": round(serving, 1) if serving else None, "stages": stages,
              "serving_rss_mb": round(memory.get("VmRSS", 0), 1),
              "serving_peak_rss_mb": round(memory.get("VmHWM", 0), 1), "torch_in_server": torch,
              "other_terminal_lines": other[:20], "load_before": [round(x, 2) for x in load_before],
              "load_after": [round(x, 2) for x in os.getloadavg()],
              "log_file_lines": _count_lines(data / "logs" / "papersift.log")}
    if not keep:
        shutil.rmtree(data, ignore_errors=True)
        log.unlink(missing_ok=True)
    else:
        result["data_dir"] = str(data)
    return result


def _count_lines(path: Path) -> int:
    return len(path.read_text().splitlines()) if path.is_file() else 0


def bench_up(args: argparse.Namespace) -> dict[str, Any]:
    runs = [one_up(args.limit, args.keep) for _ in range(args.runs)]
    for run in runs:
        print(json.dumps(run), file=sys.stderr, flush=True)
    serving = [r["seconds_to_serving"] for r in runs if r["seconds_to_serving"]]
    return {"limit": args.limit, "runs": runs,
            "median_seconds_to_serving": statistics.median(serving) if serving else None,
            "median_serving_rss_mb": statistics.median(r["serving_rss_mb"] for r in runs)}


# ---------------------------------------------------------------- embed gap
def embed_gap(args: argparse.Namespace) -> dict[str, Any]:
    from papersift.ingest.stage import Ingest
    from papersift.search.embed import LocalEmbedder, embedding_text
    from papersift.search.stage import Embed
    from papersift.settings import load_settings
    from papersift.store import open_store

    work = Path(tempfile.mkdtemp(prefix="papersift-embed-gap-"))
    with gzip.open(RECENT, "rt", encoding="utf-8") as handle:
        rows = [json.loads(line) for line in itertools.islice(handle, args.n)]
    source = work / "papers.jsonl"
    source.write_text("".join(json.dumps(r) + "\n" for r in rows))
    texts = [embedding_text(r["title"], r["abstract"]) for r in rows]
    settings = load_settings(data_dir=str(work / "model"), threads=args.threads)
    embedder = LocalEmbedder(settings)
    embedder.embed(texts[:32])  # export (if needed) and warm

    class Timed:
        """The embedder, with the time spent in it counted."""

        def __init__(self) -> None:
            self.model_id, self.dim, self.seconds = embedder.model_id, embedder.dim, 0.0

        def embed(self, batch: list[str]) -> Any:
            started = time.perf_counter()
            try:
                return embedder.embed(batch)
            finally:
                self.seconds += time.perf_counter() - started

    raw, stage, encoder_share = [], [], []
    for run in range(args.runs):
        started = time.perf_counter()
        embedder.embed(texts)
        raw.append(len(texts) / (time.perf_counter() - started))
        run_settings = load_settings(data_dir=str(work / f"run{run}"), threads=args.threads)
        with open_store(run_settings) as store:
            Ingest([f"file:{source}"]).run(store, run_settings)
            timed = Timed()
            started = time.perf_counter()
            Embed(embedder=timed, update_index=False).run(store, run_settings)
            seconds = time.perf_counter() - started
        stage.append(len(texts) / seconds)
        encoder_share.append(timed.seconds / seconds)
        print(json.dumps({"raw_per_s": round(raw[-1], 1), "stage_per_s": round(stage[-1], 1),
                          "encoder_share_of_stage": round(encoder_share[-1], 3)}),
              file=sys.stderr, flush=True)
    shutil.rmtree(work, ignore_errors=True)
    return {"abstracts": len(texts), "threads": args.threads, "runs": args.runs,
            "raw_per_s_median": round(statistics.median(raw), 1),
            "stage_per_s_median": round(statistics.median(stage), 1),
            "stage_over_raw": round(statistics.median(stage) / statistics.median(raw), 3),
            "encoder_share_of_stage_median": round(statistics.median(encoder_share), 3),
            "load": [round(x, 2) for x in os.getloadavg()]}


def main() -> int:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    sub = parser.add_subparsers(dest="what", required=True)
    up = sub.add_parser("up")
    up.add_argument("--limit", type=int, default=5000)
    up.add_argument("--runs", type=int, default=1)
    up.add_argument("--keep", action="store_true", help="Keep the data dirs (and stderr logs).")
    gap = sub.add_parser("embed-gap")
    gap.add_argument("--n", type=int, default=2000)
    gap.add_argument("--runs", type=int, default=3)
    gap.add_argument("--threads", type=int, default=2)
    args = parser.parse_args()
    result = bench_up(args) if args.what == "up" else embed_gap(args)
    print(json.dumps(result, indent=2))
    return 0


if __name__ == "__main__":
    raise SystemExit(main())
