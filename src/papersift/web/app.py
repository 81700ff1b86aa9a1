"""The Starlette app: routes, HTML/JSON/Atom from one dict per page, security headers, error pages."""

from __future__ import annotations

import hmac
import json
import logging
import os
import re
from collections import OrderedDict
from collections.abc import Callable
from typing import Any
from xml.sax.saxutils import escape as xml_escape

from starlette.applications import Starlette
from starlette.concurrency import run_in_threadpool
from starlette.requests import Request
from starlette.responses import RedirectResponse, Response
from starlette.routing import Mount, Route
from starlette.staticfiles import StaticFiles
from starlette.types import ASGIApp, Message, Receive, Scope, Send

from papersift.settings import Settings, load_settings
from papersift.sources import jsontext
from papersift.store import StoreUnavailable
from papersift.web import links_views, offload, urls, views
from papersift.web.delivery import delivery_routes
from papersift.web.feeds import atom_feed, xml_safe
from papersift.web.limits import SETTINGS_ENV, RequestLimits
from papersift.web.personal import personalize
from papersift.web.readers import IMPORT_BODY, SESSION_COOKIE, ReaderPages, reader_routes
from papersift.web.render import HERE, Linker, render_page
from papersift.web.search_view import search_page

log = logging.getLogger(__name__)

__all__ = ["SETTINGS_ENV", "app_from_env", "create_app"]
SITEMAP_CHUNK = 40_000
# A page number: more digits than any listing has pages would only overflow the store's integers.
_PAGE_NUMBER = re.compile(r"^[0-9]{1,6}$")
CSP = ("default-src 'self'; script-src 'self'; style-src 'self'; img-src 'self' data:; "
       "object-src 'none'; base-uri 'none'; frame-ancestors 'none'; form-action 'self'")
_HEADERS = [
    (b"content-security-policy", CSP.encode()),
    (b"x-content-type-options", b"nosniff"),
    (b"referrer-policy", b"same-origin"),
    (b"x-frame-options", b"DENY"),
]
_FORMATS = {".json": "json", ".atom": "atom"}
DATA_PAGES = 512  # page dicts kept for signed-in renderings


class SiteMiddleware:
    """`/x.json` and `/x.atom` become `/x` with a format; every response gets the security headers."""

    def __init__(self, app: ASGIApp) -> None:
        self.app = app

    async def __call__(self, scope: Scope, receive: Receive, send: Send) -> None:
        if scope["type"] != "http":
            await self.app(scope, receive, send)
            return
        path: str = scope["path"]
        if len(path) > 1 and path.endswith("/"):
            await _slash_redirect(path, scope, receive, send)
            return
        if not path.startswith((urls.STATIC + "/", "/sitemap")):
            for ext, fmt in _FORMATS.items():
                if path.endswith(ext):
                    path = path[: -len(ext)]
                    if path in ("", "/index", "/feed"):
                        path = "/"
                    scope = {**scope, "path": path, "papersift_format": fmt}
                    break

        async def send_with_headers(message: Message) -> None:
            if message["type"] == "http.response.start":
                message["headers"] = list(message.get("headers", [])) + _HEADERS
            await send(message)

        await self.app(scope, receive, send_with_headers)


async def _slash_redirect(path: str, scope: Scope, receive: Receive, send: Send) -> None:
    """'/topics/' -> '/topics', as a path (never from the Host header a client sends); the
    leading slashes are made one, so '//evil.com/' cannot become a link to another site."""
    target = "/" + path.strip("/")
    query = scope.get("query_string", b"").decode("latin-1")
    response = RedirectResponse(target + (f"?{query}" if query else ""), status_code=301)
    response.raw_headers += _HEADERS
    await response(scope, receive, send)


def _format(request: Request) -> str:
    fmt = request.scope.get("papersift_format") or request.query_params.get("format") or "html"
    return fmt if fmt in ("html", "json", "atom") else "html"


_SESSION = SESSION_COOKIE.encode() + b"="


def _session_cookie(scope: Scope) -> bool:
    """Whether the request carries a session cookie: read off the raw headers, as the many
    anonymous requests pay for it (parsing their headers and cookies cost 8% of a cached page)."""
    return any(name == b"cookie" and _SESSION in value for name, value in scope["headers"])


def _json(data: Any, status: int = 200) -> Response:
    body = json.dumps(data, ensure_ascii=False, separators=(",", ":"), default=str)
    return Response(body, status_code=status, media_type="application/json")


class PageCache:
    """Rendered pages of this process, dropped whenever the database changes.

    Pages only change when a stage commits, so between commits a page is rendered once.
    The store's `data_version()` moves when a commit changes what pages show (papers,
    summaries, topics, ...), not for a reader's likes, follows or sessions: a busy hour of
    readers keeps the cache. The site's own writes (flags) clear the cache themselves.
    """

    def __init__(self, max_bytes: int = 64 << 20) -> None:
        self.max_bytes = max_bytes
        self.entries: OrderedDict[tuple[str, ...], tuple[bytes, str, dict[str, str]]] = \
            OrderedDict()
        self.size = 0
        self.version: int | None = None
        # Page dicts of the pages signed-in readers asked for: each reader's rendering is
        # their own (never in `entries`), the shared data under it is built once.
        self.data: OrderedDict[tuple[str, ...], dict[str, Any]] = OrderedDict()

    def validate(self, version: int) -> None:
        if version != self.version:
            self.clear()
            self.version = version

    def clear(self) -> None:
        self.entries.clear()
        self.data.clear()
        self.size = 0

    def get_data(self, key: tuple[str, ...]) -> dict[str, Any] | None:
        hit = self.data.get(key)
        if hit is not None:
            self.data.move_to_end(key)
        return hit

    def put_data(self, key: tuple[str, ...], data: dict[str, Any]) -> None:
        self.data[key] = data
        while len(self.data) > DATA_PAGES:
            self.data.popitem(last=False)

    def get(self, key: tuple[str, ...]) -> Response | None:
        hit = self.entries.get(key)
        if hit is None:
            return None
        self.entries.move_to_end(key)
        body, media_type, headers = hit
        return Response(body, media_type=media_type, headers=headers)

    def put(self, key: tuple[str, ...], response: Response) -> None:
        body = bytes(response.body)
        if len(body) > self.max_bytes // 8:
            return
        headers = {k: v for k, v in response.headers.items()
                   if k in ("cache-control",)}
        self.entries[key] = (body, response.media_type or "text/html", headers)
        self.size += len(body)
        while self.size > self.max_bytes and self.entries:
            _, (old, _, _) = self.entries.popitem(last=False)
            self.size -= len(old)


class Web:
    """Endpoints bound to one Site."""

    def __init__(self, site: views.Site) -> None:
        self.site = site
        self.linker = Linker()
        self.cache = PageCache(max(0, int(site.settings.web_cache_mb)) << 20)
        self.readers: Any = None  # the ReaderPages (web.readers), which set themselves here

    @property
    def title(self) -> str:
        return self.site.settings.site_title

    def respond(self, request: Request, data: dict[str, Any]) -> Response:
        fmt = _format(request)
        if fmt == "json":
            return _json(data)
        if fmt == "atom":
            if "papers" not in data or data["page"] == "paper":
                return self.error(request, 404, f"{request.url.path} has no feed")
            return Response(atom_feed(data, self.site.settings.base_url, self.title),
                            media_type="application/atom+xml; charset=utf-8")
        html = render_page(data, self.title, self.linker, sources=views.site_sources(self.site))
        return Response(html, media_type="text/html; charset=utf-8",
                        headers={"cache-control": "public, max-age=60"})

    def error(self, request: Request, status: int, message: str) -> Response:
        heading = {404: "Page not found", 403: "Not allowed",
                   503: "Back in a moment"}.get(status, "Something went wrong")
        data = {"page": "error", "title": heading, "heading": heading, "message": message,
                "status": status, "path": request.url.path, "feed": None}
        if _format(request) in ("json", "atom"):
            return _json({"error": message, "status": status}, status)
        page = render_page(data, self.title, self.linker,
                           sources=views.site_sources(self.site, compute=False))
        return Response(page, status_code=status,
                        media_type="text/html; charset=utf-8")

    def page(self, build: Callable[[Request], dict[str, Any]],
             threaded: bool = False, cache: bool = True) -> Callable[[Request], Any]:
        """An endpoint: build the page dict, answer in the asked format; errors become pages."""

        async def endpoint(request: Request) -> Response:
            page_number = request.query_params.get("page")
            if page_number and not _PAGE_NUMBER.match(page_number):
                return self.error(request, 404, f"There is no page {page_number[:20]!r}.")
            key = (_format(request), request.url.path, request.url.query)
            try:
                if cache and self.cache.max_bytes:
                    self.cache.validate(self.site.store.data_version())
                if self.readers is not None and _session_cookie(request.scope) and \
                        _format(request) == "html":
                    mine = await self.personal(request, build, key if cache else None)
                    if mine is not None:
                        return mine
                if cache and self.cache.max_bytes:
                    hit = self.cache.get(key)
                    if hit is not None:
                        return hit
                data = await run_in_threadpool(build, request) if threaded else build(request)
                response = self.respond(request, data)
                if cache and self.cache.max_bytes and response.status_code == 200:
                    self.cache.put(key, response)
                return response
            except views.Redirect as moved:
                return RedirectResponse(moved.location, status_code=301)
            except views.NotFound as missing:
                return self.error(request, 404, str(missing).capitalize() + ".")
            except StoreUnavailable:
                return self.unavailable(request)
            except Exception:
                log.exception("error rendering %s", request.url)
                return self.error(request, 500, "The page failed to render. It has been logged; "
                                  "try again in a moment, or search instead.")

        return endpoint

    async def personal(self, request: Request, build: Callable[[Request], dict[str, Any]],
                       key: tuple[str, ...] | None) -> Response | None:
        """A signed-in reader's rendering of a shared page (their ratings, saves and follows on
        it), never cached; None when the cookie holds no live session (the page everyone
        gets). The page's dict comes from the data cache when it is there."""
        data = self.cache.get_data(key) if key and self.cache.max_bytes else None
        here = request.url.path + (f"?{request.url.query}" if request.url.query else "")

        def work() -> tuple[dict[str, Any], str] | None:
            session = self.readers.session(request)
            if session is None:
                return None
            shared = data if data is not None else build(request)
            mine = personalize(self.site, shared, session, here)
            return shared, render_page(mine, self.title, self.linker,
                                       sources=views.site_sources(self.site))

        done = await run_in_threadpool(work)
        if done is None:
            return None
        shared, html = done
        if key and data is None and self.cache.max_bytes:
            self.cache.put_data(key, shared)
        return Response(html, media_type="text/html; charset=utf-8",
                        headers={"cache-control": "private, no-store"})

    # -------------------------------------------------------------- admin
    async def flag(self, request: Request) -> Response:
        token = self.site.settings.admin_token
        given = request.headers.get("authorization", "")
        if not token or not hmac.compare_digest(given.encode(), f"Bearer {token}".encode()):
            return _json({"error": "a valid admin token is required (Authorization: Bearer ...)"},
                         403)
        pid = request.path_params["pid"]
        reason = "flagged by admin"
        body = await request.body()  # bounded by RequestLimits
        if body:
            try:
                data = jsontext.loads(body, 4)
                given = data.get("reason") if isinstance(data, dict) else None
            except ValueError:
                given = data = None
            if not isinstance(data, dict) or not isinstance(given, str | None):
                return _json({"error": "the body must be JSON like {\"reason\": \"...\"}"}, 400)
            reason = xml_safe(given or reason)[:500]
        done = self.site.store.summaries.flag_summary(pid, reason)
        self.cache.clear()  # at once, not at the next request's check
        if not done:
            return _json({"error": f"paper {pid!r} has no summary to flag"}, 404)
        return _json({"flagged": pid, "reason": reason})

    # ------------------------------------------------------------ sitemap
    def sitemap(self, request: Request) -> Response:
        base = self.site.settings.base_url.rstrip("/")
        name = request.path_params.get("name")
        if name is None:
            counts = self.site.store.pages.sitemap_counts()
            parts = ["main"] + [f"{kind}-{n + 1}" for kind in ("papers", "authors")
                                for n in range(max(1, -(-counts[kind] // SITEMAP_CHUNK)))]
            body = "".join(f"<sitemap><loc>{base}{urls.sitemap_part(p)}</loc></sitemap>"
                           for p in parts)
            return self._xml(f'<sitemapindex xmlns="http://www.sitemaps.org/schemas/sitemap/0.9">'
                             f"{body}</sitemapindex>")
        found = self._sitemap_urls(name)
        if found is None:
            return self.error(request, 404, f"no sitemap {name!r}")
        body = "".join(
            f"<url><loc>{xml_escape(base + path)}</loc>"
            + (f"<lastmod>{day}</lastmod>" if day else "") + "</url>" for path, day in found)
        return self._xml(f'<urlset xmlns="http://www.sitemaps.org/schemas/sitemap/0.9">{body}'
                         "</urlset>")

    def _sitemap_urls(self, name: str) -> list[tuple[str, str | None]] | None:
        """(path, last date) of one part of the sitemap; None if there is no such part."""
        db = self.site.store.pages
        if name == "main":
            return [(urls.FRONT, None), (urls.TOPICS, None),
                    *[(urls.daily(d), d) for d in db.all_days()],
                    *[(urls.section(s), None) for s, _ in db.sitemap_slice("sections", 10_000, 0)],
                    *[(urls.topic(s), None) for s, _ in db.sitemap_slice("topics", 100_000, 0)]]
        kind, _, number = name.rpartition("-")
        if kind not in ("papers", "authors") or not _PAGE_NUMBER.match(number) or int(number) < 1:
            return None
        if int(number) > max(1, -(-db.sitemap_counts()[kind] // SITEMAP_CHUNK)):
            return None
        rows = db.sitemap_slice(kind, SITEMAP_CHUNK, (int(number) - 1) * SITEMAP_CHUNK)
        build = urls.paper if kind == "papers" else urls.author
        return [(build(key), day) for key, day in rows]

    @staticmethod
    def _xml(body: str) -> Response:
        return Response('<?xml version="1.0" encoding="UTF-8"?>\n' + xml_safe(body),
                        media_type="application/xml")

    def latest_day(self, request: Request) -> Response:
        day = self.site.store.pages.latest_day()
        if not day:
            return self.error(request, 404, "No papers have been announced yet.")
        return RedirectResponse(urls.daily(day))

    def unavailable(self, request: Request, exc: Exception | None = None) -> Response:
        """503 while the database does not answer (a restart): the next request tries again."""
        log.warning("database unavailable for %s: %s", request.url.path, exc or "")
        response = self.error(request, 503, "The database is not answering just now; try again "
                                            "in a few seconds.")
        response.headers["retry-after"] = "5"
        return response

    async def not_found(self, request: Request, exc: Exception) -> Response:
        return self.error(request, 404, f"There is nothing at {request.url.path}.")

    async def server_error(self, request: Request, exc: Exception) -> Response:
        return self.error(request, 500, "The page failed to render; try again in a moment.")


def create_app(settings: Settings) -> Starlette:
    """The site over the store of these settings."""
    site = views.Site(settings)
    web = Web(site)
    page = web.page

    def q(request: Request, name: str = "page") -> str | None:
        return request.query_params.get(name)

    routes = [
        Route(urls.FRONT, page(lambda r: views.front(site))),
        Route(urls.DAILY, web.latest_day),
        Route(urls.ROUTES["daily"],
              page(lambda r: views.daily(site, r.path_params["day"], q(r)))),
        Route(urls.TOPICS, page(lambda r: views.topics_index(site))),
        Route(urls.ROUTES["topic"],
              page(lambda r: views.topic(site, r.path_params["slug"], q(r)))),
        Route(urls.ROUTES["section"],
              page(lambda r: views.section(site, r.path_params["slug"], q(r)))),
        Route(urls.ROUTES["category"],
              page(lambda r: views.category(site, r.path_params["name"], q(r)))),
        Route(urls.ROUTES["author"],
              page(lambda r: views.author(site, r.path_params["slug"], q(r)))),
        Route(urls.ROUTES["paper"],
              page(lambda r: views.paper(site, r.path_params["pid"]), threaded=True)),
        Route(urls.ROUTES["thread"],
              page(lambda r: links_views.thread(site, r.path_params["tid"]), threaded=True)),
        Route(urls.ROUTES["topic_week"], page(lambda r: links_views.topic_week(
            site, r.path_params["slug"], r.path_params["week"]), threaded=True)),
        Route(urls.ROUTES["topic_latest_week"], page(lambda r: links_views.topic_latest_week(
            site, r.path_params["slug"]), threaded=True)),
        Route(urls.ROUTES["topic_weeks"], page(lambda r: links_views.topic_weeks(
            site, r.path_params["slug"]), threaded=True)),
        Route(urls.SEARCH, page(lambda r: search_page(site, dict(r.query_params)),
                                threaded=True, cache=False)),
        Route(urls.SITEMAP, web.sitemap),
        Route(urls.ROUTES["sitemap_part"], web.sitemap),
        Route(urls.ROUTES["flag"], web.flag, methods=["POST"]),
        Route(urls.HEALTH, lambda r: _json({"ok": True,
                                           "latest_day": site.store.pages.latest_day()})),
        *reader_routes(readers := ReaderPages(web)),
        *delivery_routes(readers),
        Mount(urls.STATIC, StaticFiles(directory=str(HERE / "static")), name="static"),
    ]
    app = Starlette(routes=routes, exception_handlers={404: web.not_found,
                                                       500: web.server_error,
                                                       StoreUnavailable: web.unavailable})
    # Starlette's own slash redirects are built from the Host header: SiteMiddleware makes
    # them as paths instead.
    app.router.redirect_slashes = False
    app.add_middleware(RequestLimits, max_bytes=max(0, int(settings.web_max_body_kb)) << 10,
                       timeout=max(0.1, float(settings.web_header_timeout)),
                       larger={urls.ME_IMPORT: IMPORT_BODY})
    app.add_middleware(SiteMiddleware)
    app.state.site = site
    return app


def app_from_env() -> Starlette:
    """Factory for `uvicorn --factory` worker processes: settings come as JSON in the environment."""
    raw = os.environ.get(SETTINGS_ENV)
    settings = load_settings()
    if raw:
        settings = settings.replace(**json.loads(raw))
    offload.warm()  # a served worker's helper process, ready before the first import
    return create_app(settings)
