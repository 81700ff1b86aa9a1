"""A reader's side of the site: log in, sign up, /me and its forms, with signed session cookies and a CSRF token on every form.

Every form works as plain HTML (POST, then a redirect back); the same endpoints answer
JSON to a script that asks for it (Accept: application/json), which static/me.js does.
A reader's pages and writes use the reader of the session only: no URL names a reader.
"""

from __future__ import annotations

import secrets
from collections.abc import Awaitable, Callable
from typing import Any

from itsdangerous import BadSignature, URLSafeSerializer
from starlette.concurrency import run_in_threadpool
from starlette.requests import Request
from starlette.responses import JSONResponse, RedirectResponse, Response
from starlette.routing import Route

from papersift.delivery.welcome import send_sign_in_link
from papersift.errors import PapersiftError
from papersift.readers import accounts, signals
from papersift.readers.imports import MAX_IMPORT, read_import
from papersift.store import StoreUnavailable
from papersift.web import offload, reader_views, urls
from papersift.web.views import NotFound

SESSION_COOKIE = "papersift_session"
FORM_COOKIE = "papersift_form"  # double-submit token of the forms shown before logging in
MAX_FORM = 64 * 1024
# A library export pasted in a form: url-encoding makes up to three bytes of each one.
IMPORT_BODY = 3 * MAX_IMPORT + MAX_FORM


class ReaderPages:
    """The reader endpoints over one Web (see web.app)."""

    def __init__(self, web: Any) -> None:
        self.web, self.site = web, web.site
        key = accounts.secret_key(self.site.settings)
        self.sessions = URLSafeSerializer(key, salt="papersift-session")
        self.forms = URLSafeSerializer(key, salt="papersift-form")
        self.secure = self.site.settings.base_url.startswith("https://")
        web.readers = self  # signed-in requests of the shared pages ask for their session

    # ------------------------------------------------------------ sessions
    def session(self, request: Request) -> dict[str, Any] | None:
        """The live session of the request's cookie, or None."""
        raw = request.cookies.get(SESSION_COOKIE)
        if not raw:
            return None
        try:
            token = self.sessions.loads(raw)
        except BadSignature:
            return None
        return accounts.session_for(self.site.store, str(token))

    def _set_session(self, response: Response, session: accounts.Session) -> None:
        response.set_cookie(SESSION_COOKIE, self.sessions.dumps(session.token),
                            max_age=int(self.site.settings.session_days) * 86400,
                            httponly=True, samesite="lax", secure=self.secure, path="/")

    def _form_token(self, request: Request) -> tuple[str, str | None]:
        """(the token for the form, a cookie value to set when the browser has none)."""
        raw = request.cookies.get(FORM_COOKIE)
        if raw:
            try:
                return str(self.forms.loads(raw)), None
            except BadSignature:
                pass
        token = secrets.token_urlsafe(24)
        return token, self.forms.dumps(token)

    # -------------------------------------------------------------- helpers
    @staticmethod
    async def form(request: Request, limit: int = MAX_FORM) -> dict[str, str] | None:
        """The url-encoded fields of a POST, or None when the body is over `limit` bytes. A
        large body (an import) is decoded in the helper process (web.offload): in a thread
        it would hold the GIL that the event loop serves everyone else with."""
        parts, size = [], 0
        async for chunk in request.stream():
            parts.append(chunk)
            size += len(chunk)
            if size > limit:
                return None
        body = b"".join(parts)
        if size > MAX_FORM:
            return await offload.run(offload.decode_form, body)
        return offload.decode_form(body)

    @staticmethod
    def wants_json(request: Request) -> bool:
        return "application/json" in request.headers.get("accept", "")

    @staticmethod
    def back(fields: dict[str, str], default: str) -> str:
        """Where to send the browser after a form: a path on this site, never elsewhere."""
        target = fields.get("next") or default
        # A browser reads '/\evil.com' as '//evil.com'; a control character could split the header.
        if not target.startswith("/") or target.startswith("//") or "\\" in target or \
                any(ord(c) < 32 or ord(c) == 127 for c in target):
            return default
        return target

    def page(self, request: Request, data: dict[str, Any], status: int = 200,
              cookie: str | None = None) -> Response:
        response = self.web.respond(request, data)
        response.status_code = status
        response.headers["cache-control"] = "private, no-store"
        if cookie:
            response.set_cookie(FORM_COOKIE, cookie, httponly=True, samesite="lax",
                                secure=self.secure, path="/")
        return response

    def refuse(self, request: Request, status: int, message: str) -> Response:
        if self.wants_json(request) or request.scope.get("papersift_format") == "json":
            return JSONResponse({"error": message, "status": status}, status_code=status)
        return self.web.error(request, status, message)

    # ------------------------------------------------------------- pages
    async def me(self, request: Request) -> Response:
        return await self._own(request, lambda s: reader_views.me(self.site, s))

    async def profile(self, request: Request) -> Response:
        return await self._own(request, lambda s: reader_views.profile(self.site, s))

    async def collection(self, request: Request) -> Response:
        name = request.path_params["name"]
        return await self._own(request, lambda s: reader_views.collection(self.site, s, name))

    async def _own(self, request: Request, build: Callable[[dict[str, Any]], dict[str, Any]]
                   ) -> Response:
        session = self.session(request)
        if session is None:
            if request.scope.get("papersift_format") in ("json", "atom") or \
                    self.wants_json(request):
                return self.refuse(request, 401, "log in to see this page")
            return RedirectResponse(urls.with_query(urls.LOGIN, next=request.url.path),
                                    status_code=303)
        try:
            data = await run_in_threadpool(build, session)
        except NotFound as missing:
            return self.refuse(request, 404, str(missing).capitalize() + ".")
        return self.page(request, data)

    async def login_page(self, request: Request) -> Response:
        token, cookie = self._form_token(request)
        data = reader_views.login(self.site, token, next_path=self.back(
            dict(request.query_params), urls.ME), session=self.session(request))
        return self.page(request, data, cookie=cookie)

    async def signup_page(self, request: Request) -> Response:
        token, cookie = self._form_token(request)
        return self.page(request, reader_views.signup(self.site, token), cookie=cookie)

    # -------------------------------------------------------------- logins
    async def _account_form(self, request: Request
                            ) -> tuple[dict[str, str], str] | Response:
        """(fields, form token) of a log-in or sign-up form, or the refusal of an expired one
        (these forms come before any session, so their token rides in its own cookie)."""
        fields = await self.form(request)
        token, _ = self._form_token(request)
        if fields is None or not accounts.csrf_matches(token, fields.get("form_token")):
            return self.refuse(request, 403, "the form has expired; reload the page and try "
                                              "again")
        return fields, token

    async def login(self, request: Request) -> Response:
        form = await self._account_form(request)
        if isinstance(form, Response):
            return form
        fields, token = form
        try:
            session = await run_in_threadpool(
                self.site.with_store, accounts.log_in, self.site.settings, fields.get("name", ""),
                fields.get("password", ""), _address(request))
        except StoreUnavailable:
            raise  # a 503 (web.app), not the reader's mistake
        except PapersiftError as exc:
            data = reader_views.login(self.site, token, str(exc), self.back(fields, urls.ME))
            return self.page(request, data, status=401)
        return self._logged_in(request, session, self.back(fields, urls.ME))

    async def signup(self, request: Request) -> Response:
        form = await self._account_form(request)
        if isinstance(form, Response):
            return form
        fields, token = form
        try:
            session = await run_in_threadpool(
                self.site.with_store, accounts.sign_up, self.site.settings, fields.get("name", ""),
                fields.get("password", ""), fields.get("email"), fields.get("invitation"),
                _address(request))
        except StoreUnavailable:
            raise  # a 503 (web.app), not the reader's mistake
        except PapersiftError as exc:
            data = reader_views.signup(self.site, token, str(exc), fields)
            return self.page(request, data, status=400)
        return self._logged_in(request, session, urls.ME_PROFILE)

    async def sign_in_link(self, request: Request) -> Response:
        """A link by email to choose a new password (the same answer for every name)."""
        form = await self._account_form(request)
        if isinstance(form, Response):
            return form
        fields, token = form
        try:
            said = await run_in_threadpool(self.site.with_store, send_sign_in_link,
                                           self.site.settings, fields.get("name", ""),
                                           _address(request))
            status = 200
        except StoreUnavailable:
            raise  # a 503 (web.app), not the reader's mistake
        except PapersiftError as exc:
            said, status = str(exc), 400
        if self.wants_json(request):
            return JSONResponse({"ok": status == 200, "message": said}, status_code=status)
        data = reader_views.login(self.site, token, said[:1].upper() + said[1:] + ".",
                                  self.back(fields, urls.ME))
        return self.page(request, data, status=status)

    def _logged_in(self, request: Request, session: accounts.Session, target: str) -> Response:
        if self.wants_json(request):
            response: Response = JSONResponse({"ok": True, "reader": session.reader["name"],
                                               "csrf": session.csrf_token})
        else:
            response = RedirectResponse(target, status_code=303)
        self._set_session(response, session)
        return response

    async def logout(self, request: Request) -> Response:
        return await self.write(request, lambda store, rid, f: accounts.log_out(
            store, self.sessions.loads(request.cookies[SESSION_COOKIE])), urls.FRONT,
            forget=True)

    # -------------------------------------------------------------- writes
    async def authorize(self, request: Request, limit: int = MAX_FORM
                        ) -> tuple[dict[str, Any], dict[str, str]] | Response:
        """(session, form fields) of a reader's write, or the refusal to answer with: logged
        in, the body within `limit`, the form's CSRF token right."""
        session = self.session(request)
        if session is None:
            return self.refuse(request, 401, "log in first (or your session has expired)")
        fields = await self.form(request, limit)
        if fields is None:
            return self.refuse(request, 413, f"that is more than {limit // 1024} KB; send less")
        given = fields.get("csrf") or request.headers.get("x-csrf-token")
        if not accounts.csrf_matches(session["csrf_token"], given):
            return self.refuse(request, 403, "the form's token is missing or wrong; reload the "
                                              "page and try again")
        return session, fields

    async def write(self, request: Request, action: Callable[[Any, int, dict[str, str]], Any],
                    default: str, limit: int = MAX_FORM, forget: bool = False) -> Response:
        """Run a reader's write once authorized; a PapersiftError changes nothing and says why."""
        authorized = await self.authorize(request, limit)
        if isinstance(authorized, Response):
            return authorized
        session, fields = authorized
        try:
            result = await run_in_threadpool(self.site.with_store, action,
                                             session["reader"]["id"], fields)
        except StoreUnavailable:
            raise  # a 503 (web.app), not the reader's mistake
        except PapersiftError as exc:
            return self.refuse(request, 400, str(exc))
        if self.wants_json(request):
            response: Response = JSONResponse({"ok": True, "result": result})
        else:
            response = RedirectResponse(self.back(fields, default), status_code=303)
        if forget:
            response.delete_cookie(SESSION_COOKIE, path="/")
        return response

    async def react(self, request: Request) -> Response:
        return await self.write(request, lambda s, rid, f: signals.react(
            s, rid, f.get("paper_id", ""), f.get("reaction", "")), urls.ME)

    async def follow(self, request: Request) -> Response:
        return await self.write(request, lambda s, rid, f: list(signals.follow(
            s, rid, _target(f))), urls.ME_PROFILE)

    async def unfollow(self, request: Request) -> Response:
        return await self.write(request, lambda s, rid, f: signals.unfollow(
            s, rid, _target(f)), urls.ME_PROFILE)

    async def feedback(self, request: Request) -> Response:
        def give(store: Any, rid: int, fields: dict[str, str]) -> dict[str, Any]:
            reading = signals.give_feedback(store, rid, fields.get("text", ""))
            if not reading.entries:
                raise signals.SignalError(
                    "papersift could not read a wish in that; write for example “less about "
                    "benchmarks, more about theory” or “nothing on autonomous driving”")
            return {"entries": [e.__dict__ for e in reading.entries],
                    "not_understood": reading.not_understood}
        return await self.write(request, give, urls.ME_PROFILE)

    async def add_entry(self, request: Request) -> Response:
        return await self.write(request, lambda s, rid, f: signals.add_entry(
            s, rid, f.get("kind", ""), f.get("phrase", "")), urls.ME_PROFILE)

    async def remove_entry(self, request: Request) -> Response:
        return await self.write(request, lambda s, rid, f: s.readers.remove_profile_entry(
            rid, _number(f.get("entry_id"))), urls.ME_PROFILE)

    async def save(self, request: Request) -> Response:
        return await self.write(request, lambda s, rid, f: signals.save(
            s, rid, f.get("collection", ""), f.get("paper_id", "")), urls.ME)

    async def unsave(self, request: Request) -> Response:
        return await self.write(request, lambda s, rid, f: s.readers.remove_from_collection(
            rid, f.get("collection", ""), f.get("paper_id", "")), urls.ME_PROFILE)

    async def claim(self, request: Request) -> Response:
        return await self.write(request, lambda s, rid, f: signals.claim(
            s, rid, f.get("author", "")), urls.ME)

    async def unclaim(self, request: Request) -> Response:
        return await self.write(request, lambda s, rid, f: signals.unclaim(
            s, rid, f.get("author", "")), urls.ME_PROFILE)

    async def import_papers(self, request: Request) -> Response:
        """Like the papers of pasted ids or an exported library; the answer says what was read
        (a browser gets the profile page with it, a script JSON)."""
        authorized = await self.authorize(request, IMPORT_BODY)
        if isinstance(authorized, Response):
            return authorized
        session, fields = authorized
        try:
            # Read in the helper process (web.offload), then liked in a thread with the store.
            found = await offload.run(read_import, fields.get("text", ""))
            result = await run_in_threadpool(self.site.with_store, signals.like_found,
                                             session["reader"]["id"], found)
            status = 200
        except StoreUnavailable:
            raise  # a 503 (web.app), not the reader's mistake
        except PapersiftError as exc:
            result, status = {"error": str(exc)}, 400
        if self.wants_json(request):
            if status != 200:
                return self.refuse(request, status, result["error"])
            return JSONResponse({"ok": True, "result": result})
        data = await run_in_threadpool(reader_views.profile, self.site, session)
        data["import_result"] = result
        return self.page(request, data, status=status)


def _address(request: Request) -> str:
    return request.client.host if request.client else ""


def _target(fields: dict[str, str]) -> str:
    if fields.get("target"):
        return fields["target"]
    return f"{fields.get('kind', '')}:{fields.get('value', '')}"


def _number(text: str | None) -> int:
    try:
        return int(text or "")
    except ValueError:
        raise signals.SignalError(f"{text!r} is not an entry number") from None


def reader_routes(pages: ReaderPages) -> list[Route]:
    posts: list[tuple[str, Callable[[Request], Awaitable[Response]]]] = [
        (urls.LOGIN, pages.login), (urls.LOGIN_LINK, pages.sign_in_link),
        (urls.SIGNUP, pages.signup), (urls.LOGOUT, pages.logout),
        (urls.ME_REACT, pages.react), (urls.ME_FOLLOW, pages.follow),
        (urls.ME_UNFOLLOW, pages.unfollow), (urls.ME_FEEDBACK, pages.feedback),
        (urls.ME_ENTRY_DELETE, pages.remove_entry), (urls.ME_ENTRIES, pages.add_entry),
        (urls.ME_UNSAVE, pages.unsave), (urls.ME_SAVE, pages.save),
        (urls.ME_IMPORT, pages.import_papers), (urls.ME_UNCLAIM, pages.unclaim),
        (urls.ME_CLAIM, pages.claim),
    ]
    return [
        *[Route(path, handler, methods=["POST"]) for path, handler in posts],
        Route(urls.LOGIN, pages.login_page), Route(urls.SIGNUP, pages.signup_page),
        Route(urls.ME, pages.me), Route(urls.ME_PROFILE, pages.profile),
        Route(urls.ROUTES["me_collection"], pages.collection),
    ]
