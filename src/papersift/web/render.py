"""The Jinja2 environment (autoescape on) and how links are written: site paths or relative files."""

from __future__ import annotations

import posixpath
from collections.abc import Mapping, Sequence
from functools import lru_cache
from pathlib import Path
from typing import Any
from urllib.parse import parse_qs, quote, urlsplit

from jinja2 import Environment, FileSystemLoader

from papersift.web import urls

HERE = Path(__file__).parent
TEMPLATES = {
    "front": "front.html", "daily": "daily.html", "topics": "topics.html",
    "section": "section.html", "topic": "listing.html", "category": "listing.html",
    "author": "author.html", "paper": "paper.html", "search": "search.html",
    "error": "error.html", "me": "me.html", "profile": "profile.html",
    "collection": "collection.html", "login": "login.html", "signup": "signup.html",
    "link": "link.html", "thread": "thread.html", "brief": "brief.html", "briefs": "briefs.html",
}


def static_file(path: str) -> str:
    """Where a site path is written in the static export: '/topics/x?page=2' -> 'topics/x/2.html'."""
    parts = urlsplit(path)
    clean = parts.path.strip("/")
    page = parse_qs(parts.query).get("page", ["1"])[0]
    if not clean:
        base = "index"
    elif clean.endswith((".atom", ".xml", ".css", ".js", ".json", ".svg")):
        return clean
    else:
        base = clean
    if page not in ("", "1"):
        return f"{base}/{page}.html"
    return f"{base}.html"


def sparkline(counts: list[int], width: int = 96, height: int = 24) -> str:
    """SVG polyline points for weekly counts (markup only, so fine under a strict CSP)."""
    if not counts:
        return ""
    top = max(counts) or 1
    step = width / max(1, len(counts) - 1)
    return " ".join(f"{i * step:.1f},{height - 2 - (c / top) * (height - 4):.1f}"
                    for i, c in enumerate(counts))


def card_id(paper: Any) -> str:
    """The anchor of a paper's card (a form sends the browser back to it)."""
    return f"{paper.get('card_prefix') or ''}p-{str(paper['id']).replace('/', '-')}"


def sign_in_to(path: str, paper: Any | None = None) -> str:
    """The log-in page, coming back to `path` (at the paper's card) once signed in."""
    target = path + (f"#{card_id(paper)}" if paper is not None else "")
    return f"{urls.LOGIN}?next={quote(target, safe='/')}"


@lru_cache(maxsize=1)
def environment() -> Environment:
    env = Environment(
        loader=FileSystemLoader(str(HERE / "templates")),
        autoescape=True, trim_blocks=True, lstrip_blocks=True,
    )
    env.globals["sparkline"] = sparkline
    env.globals["urls"] = urls
    env.globals["card_id"] = card_id
    env.globals["sign_in_to"] = sign_in_to
    return env


class Linker:
    """Turns site paths into hrefs: as they are (server), or relative to the page's file (export)."""

    def __init__(self, static_from: str | None = None) -> None:
        self.static_from = static_from  # the site path of the page being exported

    def __call__(self, path: str | None) -> str:
        if not path:
            return ""
        if self.static_from is None or "://" in path:
            return path
        here = posixpath.dirname(static_file(self.static_from))
        return posixpath.relpath(static_file(path), here or ".")


def render_page(data: dict[str, Any], site_title: str, linker: Linker,
                static_site: bool = False, sources: Sequence[Mapping[str, str]] = ()) -> str:
    """The page's HTML; `sources` ({name, url}) are the sites its footer credits (arXiv alone
    when empty)."""
    template = environment().get_template(TEMPLATES[data["page"]])
    return template.render(d=data, site_title=site_title, link=linker, static_site=static_site,
                           sources=sources or [{"name": "arXiv", "url": "https://arxiv.org/"}])
