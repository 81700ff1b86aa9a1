"""Mutation testing of the templates' escaping: each printed expression made `|safe` in turn.

Templates are not Python, so mutmut cannot mutate them. Autoescaping is the rule that keeps
hostile text inert; its one way to fail per expression is an expression printed raw. Each
mutant adds `|safe` to one `{{ … }}` and requests, in this process, every page of the four
hostile stores of tests/test_web_escaping.py (GETs, and the POSTs of its forms); the mutant is
killed when a page check fails.

A mutant whose expression is printed on some page, and whose every page renders byte for
byte as without it, prints nothing a reader or an upstream controls in the hostile fixture (a
number, a date, a path built by web/urls.py, a fixed word): it is listed as equivalent rather
than survived; so is one listed in EQUIVALENT (with its reason) whose pages parse the same. An
expression no page of the fixture prints is "not reached" and counts as not killed. The email
digest's templates (templates/email, their own environment) are not run. The last line printed
is the summary as JSON.
"""

from __future__ import annotations

import json
import re
import sys
import tempfile
from html.parser import HTMLParser
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


# Printed raw, these differ from their escaped form only in "&" (written "&amp;" when
# escaped): each is a path built by web/urls.py, whose query values urlencode() percent-encodes
# (no quote, "<" or ">" can be in them), and an "&" followed by a parameter name and "=" is read
# by a browser as "&" in an attribute. A listed mutant counts as equivalent only when every page
# parses to the same elements, attributes and text as without it; else it survived.
EQUIVALENT = {
    ("base.html", "link(d.feed)"): "the page's Atom feed: urls.feed() of a percent-encoded "
                                   "path, or the search feed with its query urlencoded",
    ("search.html", "d.feed"): "the search's Atom feed: its query urlencoded",
    ("search.html", "d.prev"): "the previous page of results: the query urlencoded",
    ("search.html", "d.next"): "the next page of results: the query urlencoded",
}
# A new private feed address each time its form is posted: not what a mutant changed.
_VOLATILE = re.compile(r"token=[\w-]+")


def main() -> int:
    from jinja2 import ChoiceLoader, DictLoader, FileSystemLoader
    from tests import test_web_escaping as pages

    from papersift.settings import load_settings
    from papersift.web.render import environment

    data = tempfile.mkdtemp(prefix="papersift-mutate-templates-")
    # The page cache off: every request renders (a cached page would hide the mutant).
    settings = load_settings(environ={}, data_dir=data, web_cache_mb=0, request_delay=0.0)
    env = environment()
    files = FileSystemLoader(str(TEMPLATES))

    def use(loader: object) -> None:
        env.loader = loader
        env.cache.clear() if env.cache is not None else None

    with pages.hostile_sites(settings) as sites:
        baseline = [_stable(pages.check_pages(client, wanted)) for client, wanted in sites]
        outcomes: dict[str, list[str]] = {"killed": [], "equivalent": [], "survived": [],
                                          "not reached": []}
        parsed_alike: list[str] = []  # equivalent by EQUIVALENT, not byte for byte
        use(ChoiceLoader([DictLoader(_marked()), files]))
        shown = "".join(t for r in _rendered(sites) for t in r.values())
        reached = set(re.findall(r"<!--reach:([^>]+?)-->", shown))
        for name, offset, text in mutants():
            use(ChoiceLoader([DictLoader({name: text}), files]))
            label = f"{name}@{offset}"
            if label not in reached:
                outcomes["not reached"].append(label)
                continue
            try:
                rendered = _rendered(sites, check=True)
            except AssertionError:
                outcomes["killed"].append(label)
                continue
            outcome = _unkilled(name, offset, rendered, baseline)
            outcomes[outcome].append(label)
            if outcome == "equivalent" and rendered != baseline:
                parsed_alike.append(label)
        use(files)
    killed = len(outcomes["killed"])
    total = killed + len(outcomes["survived"]) + len(outcomes["not reached"])
    summary = {"module": "templates", "killed": killed, "total": total,
               "score": round(killed / total, 4) if total else None,
               "generated": total + len(outcomes["equivalent"]),
               "counts": {k: len(v) for k, v in outcomes.items()},
               "mutants": outcomes,
               "equivalent_listed": {f"{t}: {e}": why for (t, e), why in EQUIVALENT.items()},
               "equivalent_as_parsed": parsed_alike}
    out = ROOT / "build" / "mutate"
    out.mkdir(parents=True, exist_ok=True)
    (out / "templates.json").write_text(json.dumps(summary, indent=2) + "\n")
    print(json.dumps(summary))
    return 0


def _expression(name: str, offset: int) -> str:
    text = (TEMPLATES / name).read_text(encoding="utf-8")
    return _PRINTED.match(text, offset).group(1).rstrip("-").strip()


def _unkilled(name: str, offset: int, rendered: list[dict], baseline: list[dict]) -> str:
    """'equivalent' when every page is the same as without the mutant (byte for byte, or,
    for an expression listed in EQUIVALENT, as a browser parses it); else 'survived'."""
    if rendered == baseline:
        return "equivalent"
    if (name, _expression(name, offset)) in EQUIVALENT and all(
            _parsed(page) == _parsed(base[key])
            for now, base in zip(rendered, baseline, strict=True) for key, page in now.items()):
        return "equivalent"
    return "survived"


class _Parsed(HTMLParser):
    """A page's elements, with their attributes' values as a browser reads them, and text."""

    def __init__(self, page: str) -> None:
        super().__init__(convert_charrefs=True)
        self.events: list[tuple] = []
        self.feed(page)
        self.close()

    def handle_starttag(self, tag: str, attrs: list) -> None:
        self.events.append(("start", tag, tuple(attrs)))

    def handle_endtag(self, tag: str) -> None:
        self.events.append(("end", tag))

    def handle_data(self, data: str) -> None:
        self.events.append(("text", data))


def _parsed(page: str) -> list[tuple]:
    return _Parsed(page).events


def _stable(rendered: dict) -> dict:
    return {key: _VOLATILE.sub("token=…", text) for key, text in rendered.items()}


def _rendered(sites: list, check: bool = False) -> list[dict]:
    """Every page of every store, by key (each checked first when `check`)."""
    from tests import test_web_escaping as pages

    out = []
    for client, wanted in sites:
        answers = {key: pages.fetch(client, key) for key in wanted}
        if check:
            for key, literals in wanted.items():
                pages.check_page(key, answers[key], literals)
        out.append(_stable({key: answer.text for key, answer in answers.items()}))
    return out


if __name__ == "__main__":
    raise SystemExit(main())
