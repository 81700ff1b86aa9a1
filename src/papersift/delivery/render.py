"""A digest as mail clients read it: plain text, and HTML with inline styles only (no images, no scripts, no remote resources)."""

from __future__ import annotations

from datetime import date
from functools import lru_cache
from pathlib import Path
from typing import Any

from jinja2 import Environment, FileSystemLoader, select_autoescape

from papersift.settings import Settings
from papersift.web import urls

TEMPLATES = Path(__file__).resolve().parent / "templates"


@lru_cache(maxsize=1)
def _environment() -> Environment:
    # HTML is escaped, plain text is not (a title's "<" stays "<" in the text part).
    return Environment(loader=FileSystemLoader(str(TEMPLATES)),
                       autoescape=select_autoescape(["html"]), trim_blocks=True,
                       lstrip_blocks=True, keep_trailing_newline=True)


def render_digest(settings: Settings, reader: dict[str, Any], day: date,
                  entries: list[dict[str, Any]], unsubscribe: str,
                  weeks: list[dict[str, Any]] | None = None) -> tuple[str, str]:
    """(text, html) of a digest; `weeks`: the week in the topics the reader follows
    (delivery.weekly), for a weekly digest."""
    context = {"site_title": settings.site_title, "reader": reader, "day": day,
               "entries": entries, "unsubscribe": unsubscribe, "weeks": weeks or [],
               "profile": urls.absolute(settings, urls.ME_PROFILE),
               "feed": urls.absolute(settings, urls.ME)}
    env = _environment()
    return (env.get_template("digest.txt").render(**context),
            env.get_template("digest.html").render(**context))
