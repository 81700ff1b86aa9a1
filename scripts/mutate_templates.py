"""Mutation testing of the templates' escaping: each printed expression made `|safe` in turn.

Templates are not Python, so mutmut cannot mutate them. Autoescaping is the rule that keeps
hostile text inert; its one way to fail per expression is an expression printed raw. Each
mutant adds `|safe` to one `{{ … }}` and renders every page kind of tests/test_web_escaping.py
(hostile text in a query, a title and abstract, an author, a topic label and a reader's
follows) in this process; the mutant is killed when a page check fails.

A mutant whose expression is printed on some page, and whose every page renders byte for
byte as without it, prints nothing a reader or an upstream controls in the hostile fixture (a
number, a date, a path built by web/urls.py, a fixed word): it is listed as equivalent rather
than survived. An expression no page of the fixture prints is "not reached" and counts as not
killed. The email digest's templates (templates/email, their own environment) are not run.
The last line printed is the summary as JSON.
"""

from __future__ import annotations

import json
import re
import sys
import tempfile
from pathlib import Path

ROOT = Path(__file__).resolve().parents[1]
sys.path.insert(0, str(ROOT))
TEMPLATES = ROOT / "src" / "papersift" / "web" / "templates"
_PRINTED = re.compile(r"\{\{(.*?)\}\}", re.S)


def mutants() -> list[tuple[str, int, str]]:
    """(template name, offset, mutated text) for every printed expression not already safe."""
    found = []
    for path in sorted(TEMPLATES.glob("*.html")):  # email/: the digest's own environment
        name = path.relative_to(TEMPLATES).as_posix()
        text = path.read_text(encoding="utf-8")
        for match in _PRINTED.finditer(text):
            inner = match.group(1).rstrip("-").rstrip()
            if re.search(r"\|\s*safe\b", inner):
                continue
            end = match.start(1) + len(inner)
            found.append((name, match.start(), f"{text[:match.start(1)]}({inner.strip()})|safe"
                                                f"{text[end:]}"))
    return found


def _marked() -> dict[str, str]:
    """Every template with a comment naming each printed expression after it."""
    marked = {}
    for path in sorted(TEMPLATES.glob("*.html")):
        text = path.read_text(encoding="utf-8")
        marked[path.name] = _PRINTED.sub(
            lambda m, name=path.name: f"{m.group(0)}<!--reach:{name}@{m.start()}-->", text)
    return marked


def main() -> int:
    from jinja2 import ChoiceLoader, DictLoader, FileSystemLoader
    from starlette.testclient import TestClient
    from tests import test_web_escaping as pages

    from papersift.settings import load_settings
    from papersift.web.app import create_app
    from papersift.web.render import environment

    data = tempfile.mkdtemp(prefix="papersift-mutate-templates-")
    # The page cache off: every request renders (a cached page would hide the mutant).
    settings = load_settings(environ={}, data_dir=data, web_cache_mb=0)
    pages.hostile_store(settings)
    env = environment()
    files = FileSystemLoader(str(TEMPLATES))
    with TestClient(create_app(settings)) as client:
        wanted = {**pages.public_pages(client), **pages.log_in_a_reader(client, settings)}
        baseline = pages.check_pages(client, wanted)
        outcomes: dict[str, list[str]] = {"killed": [], "equivalent": [], "survived": []}
        env.loader = ChoiceLoader([DictLoader(_marked()), files])
        env.cache.clear() if env.cache is not None else None
        shown = "".join(_rendered(client, wanted).values())
        reached = set(re.findall(r"<!--reach:([^>]+?)-->", shown))
        outcomes["not reached"] = []
        for name, offset, text in mutants():
            env.loader = ChoiceLoader([DictLoader({name: text}), files])
            env.cache.clear() if env.cache is not None else None
            label = f"{name}@{offset}"
            if label not in reached:
                outcomes["not reached"].append(label)
                continue
            try:
                rendered = _rendered(client, wanted)
                pages.check_pages(client, wanted)
            except AssertionError:
                outcomes["killed"].append(label)
                continue
            same = rendered == baseline
            outcomes["equivalent" if same else "survived"].append(label)
        env.loader = files
        env.cache.clear() if env.cache is not None else None
    killed = len(outcomes["killed"])
    total = killed + len(outcomes["survived"]) + len(outcomes["not reached"])
    summary = {"module": "templates", "killed": killed, "total": total,
               "score": round(killed / total, 4) if total else None,
               "generated": total + len(outcomes["equivalent"]),
               "counts": {k: len(v) for k, v in outcomes.items()},
               "mutants": outcomes}
    out = ROOT / "build" / "mutate"
    out.mkdir(parents=True, exist_ok=True)
    (out / "templates.json").write_text(json.dumps(summary, indent=2) + "\n")
    print(json.dumps(summary))
    return 0


def _rendered(client: object, wanted: dict[str, list[str]]) -> dict[str, str]:
    return {path: client.get(path).text for path in wanted}  # type: ignore[attr-defined]


if __name__ == "__main__":
    raise SystemExit(main())
