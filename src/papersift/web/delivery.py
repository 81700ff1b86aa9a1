"""The site's side of delivery: one-click links from digests, the private feed, digest settings, export and account deletion."""

from __future__ import annotations

import json
from typing import Any

from starlette.concurrency import run_in_threadpool
from starlette.requests import Request
from starlette.responses import JSONResponse, Response
from starlette.routing import Route

from papersift.delivery import preferences
from papersift.delivery.links import LinkResult, follow_link
from papersift.errors import PapersiftError
from papersift.readers.export import delete_account, export_reader
from papersift.recommend.feed import build_feed
from papersift.store import StoreUnavailable
from papersift.web import reader_views, urls
from papersift.web.feeds import atom_feed
from papersift.web.readers import SESSION_COOKIE, ReaderPages
from papersift.web.views import item


class DeliveryPages:
    """Endpoints over the reader pages' sessions and forms."""

    def __init__(self, pages: ReaderPages) -> None:
        self.pages, self.site = pages, pages.site

    # ------------------------------------------------------------- links
    async def link(self, request: Request) -> Response:
        """GET: say what the link does, with the button that does it (a script presses it in
        a person's browser; a mail scanner's fetch changes nothing)."""
        result = await run_in_threadpool(self.site.with_store, follow_link, self.site.settings,
                                         request.path_params["token"], None, False)
        return self._link_page(request, result)

    async def link_post(self, request: Request) -> Response:
        """POST: the link's button, a mail client's one-click unsubscribe (RFC 8058) or the
        set-password form."""
        fields = await self.pages.form(request) or {}
        password = fields.get("password") if "password" in fields else None
        try:
            result = await run_in_threadpool(self.site.with_store, follow_link, self.site.settings,
                                             request.path_params["token"], password, True)
        except StoreUnavailable:
            raise  # a 503 (web.app), not the reader's mistake
        except PapersiftError as exc:
            result = LinkResult("ask", str(exc), "set_password")
        return self._link_page(request, result)

    def _link_page(self, request: Request, result: LinkResult) -> Response:
        status = {"done": 200, "ask": 200, "confirm": 200, "used": 409, "expired": 410,
                  "forged": 400, "gone": 404}[result.status]
        data = {"page": "link", "title": "papersift", "path": request.url.path, "feed": None,
                "papers": [], "status": result.status, "message": result.message,
                "action": result.action,
                "paper_url": urls.paper(result.paper_id) if result.paper_id else None}
        return self.pages.page(request, data, status=status)

    # -------------------------------------------------------- private feed
    async def feed(self, request: Request) -> Response:
        """/me/feed.atom?token=…: the reader's ranked feed for feed readers (no cookie)."""
        reader = preferences.reader_of_feed(self.site.store, request.query_params.get("token"))
        if reader is None:
            return self.pages.refuse(request, 404, "no feed at this address (the token is "
                                                   "wrong or was replaced)")
        data = await run_in_threadpool(self._feed_data, reader)
        body = atom_feed(data, self.site.settings.base_url, self.site.settings.site_title)
        return Response(body, media_type="application/atom+xml; charset=utf-8",
                        headers={"cache-control": "private, no-store"})

    def _feed_data(self, reader: dict[str, Any]) -> dict[str, Any]:
        feed = build_feed(self.site.store, self.site.settings, reader)
        rows = self.site.store.pages.listing_by_ids([i["paper_id"] for i in feed.items])
        papers = [item(rows[i["paper_id"]]) for i in feed.items if i["paper_id"] in rows]
        return {"page": "me", "title": f"{reader['name']}’s feed", "path": urls.ME,
                "feed": urls.ME_FEED, "papers": papers}

    # ------------------------------------------------------------- writes
    async def schedule(self, request: Request) -> Response:
        return await self.pages.write(request, lambda s, rid, f: preferences.set_schedule(
            s, rid, f.get("schedule", ""), f.get("days", "").replace(" ", ",").split(","),
            f.get("paused") == "on"), urls.ME_PROFILE)

    async def feed_token(self, request: Request) -> Response:
        """A new private feed address, shown on the page that answers (and never again); or,
        with `revoke`, none: the address given last stops working."""
        authorized = await self.pages.authorize(request)
        if isinstance(authorized, Response):
            return authorized
        session, fields = authorized
        reader_id = session["reader"]["id"]
        if fields.get("revoke"):
            await run_in_threadpool(self.site.with_store, preferences.revoke_feed_token,
                                    reader_id)
            address = None
        else:
            token = await run_in_threadpool(self.site.with_store, preferences.new_feed_token,
                                            reader_id)
            address = urls.absolute(self.site.settings, f"{urls.ME_FEED}?token={token}")
        if self.pages.wants_json(request):
            return JSONResponse({"ok": True, "feed_url": address})
        data = await run_in_threadpool(reader_views.profile, self.site, session)
        data["feed_url"] = address
        if address is None:
            data["message"] = "Your private feed address no longer works."
        return self.pages.page(request, data)

    async def export(self, request: Request) -> Response:
        session = self.pages.session(request)
        if session is None:
            return self.pages.refuse(request, 401, "log in to export your data")
        data = await run_in_threadpool(self.site.with_store, export_reader, session["reader"]["id"])
        name = session["reader"]["name"]
        return Response(json.dumps(data, ensure_ascii=False, indent=2),
                        media_type="application/json", headers={
                            "content-disposition": f'attachment; filename="papersift-{name}.json"',
                            "cache-control": "private, no-store"})

    async def delete(self, request: Request) -> Response:
        session = self.pages.session(request)
        response = await self.pages.write(
            request, lambda s, rid, f: delete_account(s, self.site.settings, session["reader"],
                                                      f.get("password", "")), urls.FRONT)
        if response.status_code in (200, 303):
            response.delete_cookie(SESSION_COOKIE, path="/")
        return response


def delivery_routes(pages: ReaderPages) -> list[Route]:
    delivery = DeliveryPages(pages)
    return [
        Route(urls.ROUTES["link"], delivery.link, methods=["GET"]),
        Route(urls.ROUTES["link"], delivery.link_post, methods=["POST"]),
        Route(urls.ME_FEED_ROUTE, delivery.feed),
        Route(urls.ME_SCHEDULE, delivery.schedule, methods=["POST"]),
        Route(urls.ME_FEED_TOKEN, delivery.feed_token, methods=["POST"]),
        Route(urls.ME_EXPORT, delivery.export),
        Route(urls.ME_DELETE, delivery.delete, methods=["POST"]),
    ]
