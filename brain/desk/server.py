"""The desk's web server: a Starlette app behind a guard, run by uvicorn on 127.0.0.1 only.

The guard, for every request (a web page on any other site can make the browser send requests to
127.0.0.1, and a DNS name can be made to point there):
- the Host header must name a loopback address and this port (DNS rebinding sends another name);
- the per-run token must come with it: in the URL the command printed or its start page leads to
  (`?token=`, which sets a cookie, HttpOnly and SameSite=Strict, and moves on to the same page
  without it) or in that cookie;
- a POST must come from this origin (Origin, else Referer; Sec-Fetch-Site when the browser sends
  it) and carry the page's CSRF token in its form.
Anything else gets 403 and one line. Pages allow scripts from the desk itself only (CSP).
"""

from __future__ import annotations

import contextlib
import hmac
import html
import secrets
import signal
import socket
import sys
import threading
import time
from collections.abc import Awaitable, Callable, Iterator, MutableMapping
from dataclasses import dataclass, field
from pathlib import Path
from typing import Any
from urllib.parse import parse_qs, urlsplit

from starlette.applications import Starlette
from starlette.concurrency import run_in_threadpool
from starlette.datastructures import Headers
from starlette.requests import Request
from starlette.responses import HTMLResponse, PlainTextResponse, RedirectResponse, Response
from starlette.routing import Mount, Route
from starlette.staticfiles import StaticFiles
from starlette.templating import Jinja2Templates

from brain.commands.inbox import proposals
from brain.desk import actions, pages
from brain.errors import BrainError
from brain.text import noun, sanitized

IDLE_SECONDS = 3600  # the desk exits after an hour without a request
LOOPBACK = ("127.0.0.1", "localhost", "[::1]")
NOTES = 32  # notices kept for the page a POST redirects to
POLL = "/stamp"  # what an open page polls to learn that the vault changed

Scope = MutableMapping[str, Any]
Message = MutableMapping[str, Any]
Receive = Callable[[], Awaitable[Message]]
Send = Callable[[Message], Awaitable[None]]
ASGIApp = Callable[[Scope, Receive, Send], Awaitable[None]]

HEADERS = [
    (b"content-security-policy", b"default-src 'self'; frame-ancestors 'none'; form-action 'self'"),
    (b"x-frame-options", b"DENY"),
    (b"x-content-type-options", b"nosniff"),
    (b"referrer-policy", b"same-origin"),
    (b"cache-control", b"no-store"),
]


@dataclass
class Desk:
    vault: Path
    port: int
    token: str = field(default_factory=lambda: secrets.token_urlsafe(32))
    csrf: str = field(default_factory=lambda: secrets.token_urlsafe(32))
    last: float = field(default_factory=time.monotonic)  # the latest request, for the idle exit
    notes: dict[str, actions.Done] = field(default_factory=dict)
    wait: float = 3.0  # seconds a slow page's request waits for a fresh reading
    stopping: str = ""  # why the desk was asked to stop by a signal ("" while it runs)

    @property
    def cookie(self) -> str:
        # cookies do not tell ports apart: two desks on one machine keep a cookie each
        return f"brain_desk_{self.port}"

    @property
    def address(self) -> str:
        """The desk without its token: opens it in a browser that has its cookie."""
        return f"http://127.0.0.1:{self.port}/"

    @property
    def url(self) -> str:
        return f"{self.address}?token={self.token}"

    def hosts(self) -> set[str]:
        return {f"{h}:{self.port}" for h in LOOPBACK}

    def note(self, done: actions.Done) -> str:
        key = secrets.token_urlsafe(8)
        self.notes[key] = done
        while len(self.notes) > NOTES:
            del self.notes[next(iter(self.notes))]
        return key


def _same(a: str, b: str) -> bool:
    return hmac.compare_digest(a.encode("utf-8", "replace"), b.encode("utf-8", "replace"))


def _moving_on(here: str) -> Response:
    """The answer to the tokened URL (with the cookie): a page that goes on to `here` by itself.
    Not a 303: a browser sent to the URL by another page (the file `brain desk` opens it on, see
    brain.desk.door) follows a redirect as part of that cross-site navigation, without the
    SameSite=Strict cookie just set, and lands on a 403; a refresh from this page is the desk's
    own (Chromium, tests/test_desk_browser.py)."""
    target = html.escape(here, quote=True)
    return HTMLResponse(
        '<!DOCTYPE html><html lang="en"><head><meta charset="utf-8">'
        '<meta name="referrer" content="no-referrer">'
        f'<meta http-equiv="refresh" content="0; url={target}"><title>brain desk</title></head>'
        f'<body><p><a href="{target}">brain desk</a></p></body></html>\n'
    )


def _forbidden(why: str) -> Response:
    return PlainTextResponse(f"403 Forbidden: {why}\n", status_code=403)


class Guard:
    """ASGI middleware: the checks in the module's docstring, then the security headers."""

    def __init__(self, app: ASGIApp, desk: Desk) -> None:
        self.app, self.desk = app, desk

    async def __call__(self, scope: Scope, receive: Receive, send: Send) -> None:
        if scope["type"] != "http":
            await self.app(scope, receive, send)
            return
        refused = self.check(scope)
        # a refused request (another site knocking) or an open tab's polling is not a person
        # using the desk: neither keeps it from its idle exit
        if refused is None and scope.get("path") != POLL:
            self.desk.last = time.monotonic()
        if refused is None and scope["method"] == "GET":
            token = parse_qs(scope.get("query_string", b"").decode("latin-1")).get("token", [""])
            if token[0] and _same(token[0], self.desk.token):
                path = str(scope.get("path", "/"))
                # the same page without the token: a path, never another host (`//host`)
                here = path if path.startswith("/") and not path.startswith("//") else "/"
                refused = _moving_on(here)
                refused.set_cookie(
                    self.desk.cookie, self.desk.token, httponly=True, samesite="strict", path="/"
                )

        async def secured(message: Message) -> None:
            if message["type"] == "http.response.start":
                message.setdefault("headers", [])
                message["headers"] = [*message["headers"], *HEADERS]
            await send(message)

        if refused is not None:
            await refused(scope, receive, secured)
            return
        try:
            await self.app(scope, receive, secured)
        except Exception as exc:
            # Starlette has answered 500 and raises again for the server to log: one line and a
            # crash report instead of uvicorn's traceback on the person's terminal
            from brain.crash import crash_report

            where = scope.get("path", "")
            sys.stderr.write(
                f"brain desk: {where} failed ({type(exc).__name__}); see {crash_report(exc)}\n"
            )

    def check(self, scope: Scope) -> Response | None:
        desk = self.desk
        headers = Headers(scope=scope)
        host = headers.get("host", "")
        if host not in desk.hosts():
            return _forbidden("the Host header is not this desk's loopback address")
        cookie = Request(scope).cookies.get(desk.cookie, "")
        query = parse_qs(scope.get("query_string", b"").decode("latin-1")).get("token", [""])[0]
        if not (_same(cookie, desk.token) or (query and _same(query, desk.token))):
            return _forbidden("open the desk with the URL `brain desk` printed (it holds a token)")
        if scope["method"] not in ("GET", "HEAD"):
            if scope["method"] != "POST":
                return PlainTextResponse("405 Method Not Allowed\n", status_code=405)
            if headers.get("sec-fetch-site", "same-origin") != "same-origin":
                return _forbidden("a request from another site")
            origin = headers.get("origin") or headers.get("referer", "")
            parts = urlsplit(origin)
            if parts.scheme != "http" or parts.netloc != host:
                return _forbidden("a form sent from another origin")
        return None


def _shown(value: Any) -> Any:
    """A value a template prints ({{ ... }}), text through brain's output step
    (brain.text.sanitized: credentials masked, control and bidi characters escaped)."""
    if isinstance(value, str) and not hasattr(value, "__html__"):  # markup the page made stays
        return sanitized(value)
    return value


def _json_dumps(obj: Any, **kwargs: Any) -> str:
    import json

    from brain.present import scrubbed

    return json.dumps(scrubbed(obj), **kwargs)


def templates() -> Jinja2Templates:
    import jinja2

    env = jinja2.Environment(
        loader=jinja2.PackageLoader("brain.desk", "templates"),
        autoescape=True,  # every value is text, never markup: a proposal's <script> stays text
        undefined=jinja2.StrictUndefined,
        finalize=_shown,  # every value a page prints passes the output step, as the CLI's answers
    )
    # `|tojson` (the ledger's chart data) gives markup, which finalize leaves: its data is masked
    # as `--json`'s is (brain.present.scrubbed)
    env.policies["json.dumps_function"] = _json_dumps
    env.filters["n"] = lambda v: f"{v:,}"
    # `{{ n|plural("hit") }}`: 1 hit, 2 hits, 1,200 hits (brain.text's one helper for the noun)
    env.filters["plural"] = lambda v, word, many="": f"{v:,} {noun(v, word, many)}"
    env.filters["noun"] = lambda v, word, many="": noun(v, word, many)  # the number styled apart
    return Jinja2Templates(env=env)


def create_app(desk: Desk) -> ASGIApp:
    """The desk's ASGI app for `desk`: routes behind the guard."""
    views = templates()

    def page(request: Request, name: str, context: dict[str, Any]) -> Response:
        note = desk.notes.pop(request.query_params.get("note", ""), None)
        count: int | str
        try:
            items = context.get("items")
            count = len(items) if items is not None else len(proposals(desk.vault))
        except BrainError:
            count = "?"
        from markupsafe import Markup

        # the form's own token, printed as it is: the output step would mask what it must send back
        csrf = Markup(desk.csrf)  # noqa: S704 - token_urlsafe: letters, digits, - and _ only
        base = {"csrf": csrf, "note": note, "vault": str(desk.vault), "page": name}
        base["stamp"] = pages.stamp(desk.vault)  # after the page read the vault
        return views.TemplateResponse(
            request, f"{name}.html", {**base, "inbox_count": count, **context}
        )

    # Sync endpoints: Starlette runs them in its thread pool, so a slow page never holds up
    # another (or the poll of an open tab).
    def view(name: str, read: Callable[[Path], dict[str, Any]]) -> Route:
        def endpoint(request: Request) -> Response:
            try:
                context = read(desk.vault)
            except BrainError as exc:
                context = {"error": exc}
            return page(request, name, context)

        return Route(f"/{name}", endpoint, methods=["GET"])

    def background(name: str, read: Callable[[Path], dict[str, Any]], *, usage: bool) -> Route:
        slow = pages.Background(read, usage=usage)
        return view(name, lambda vault: slow.get(vault, desk.wait))

    async def home(request: Request) -> Response:
        return RedirectResponse("/inbox", status_code=303)

    def stamp(request: Request) -> Response:
        return PlainTextResponse(pages.stamp(desk.vault))

    def favicon(request: Request) -> Response:
        # browsers ask for /favicon.ico whatever a page links (it was a 404 in every tab's log)
        from importlib.resources import files

        icon = files("brain.desk").joinpath("static", "favicon.svg").read_bytes()
        return Response(icon, media_type="image/svg+xml")

    def search(request: Request) -> Response:
        q = request.query_params.get("q", "")
        where = request.query_params.get("in", "vault")
        return page(request, "search", pages.search(desk.vault, q, where))

    def action(path: str, back: str, run: Callable[[Any], actions.Done]) -> Route:
        async def endpoint(request: Request) -> Response:
            form = await request.form()
            if not _same(str(form.get("csrf", "")), desk.csrf):
                return _forbidden("the form's CSRF token is missing or wrong; reload the page")
            try:
                done = await run_in_threadpool(run, form)
            except BrainError as exc:
                done = actions.Done(str(exc), ok=False)
            return RedirectResponse(f"{back}?note={desk.note(done)}", status_code=303)

        return Route(path, endpoint, methods=["POST"])

    def field_(form: Any, name: str) -> str:
        return str(form.get(name, ""))

    v = desk.vault
    routes = [
        Route("/", home, methods=["GET"]),
        view("inbox", pages.inbox),
        background("misses", pages.misses, usage=True),
        view("ledger", pages.ledger),
        # doctor reads the usage log for one advisory only (bullets lookups keep returning): an
        # agent's every lookup does not set off minutes of reading again
        background("health", pages.health, usage=False),
        Route("/search", search, methods=["GET"]),
        Route(POLL, stamp, methods=["GET"]),
        Route("/favicon.ico", favicon, methods=["GET"]),
        action(
            "/inbox/approve",
            "/inbox",
            lambda f: actions.approve(v, field_(f, "key"), field_(f, "to")),
        ),
        action(
            "/inbox/edit",
            "/inbox",
            lambda f: actions.edit_then_approve(
                v, field_(f, "key"), field_(f, "text"), field_(f, "to")
            ),
        ),
        action("/inbox/drop", "/inbox", lambda f: actions.drop(v, field_(f, "key"))),
        action(
            "/inbox/bulk",
            "/inbox",
            lambda f: actions.bulk(
                v, [str(k) for k in f.getlist("key")], field_(f, "action"), field_(f, "to")
            ),
        ),
        action(
            "/misses/synonym",
            "/misses",
            lambda f: actions.add_synonym(v, field_(f, "term"), field_(f, "expansion")),
        ),
        action(
            "/misses/propose",
            "/misses",
            lambda f: actions.propose(v, field_(f, "line"), field_(f, "to")),
        ),
        Mount("/static", StaticFiles(packages=[("brain.desk", "static")]), name="static"),
    ]
    return Guard(Starlette(routes=routes, exception_handlers={404: _missing}), desk)


_PAGES = ("/inbox", "/misses", "/ledger", "/health", "/search")


def _missing(request: Request, exc: Exception) -> Response:
    """A path the desk has no page for (`/static/../x`, `/notes/%2e%2e%2f...`): one line naming
    it and the pages there are, not Starlette's bare "Not Found"."""
    from brain.text import printable

    return PlainTextResponse(
        f"404 Not Found: the desk has no page at {printable(request.url.path)}; "
        f"its pages are {', '.join(_PAGES)}\n",
        status_code=404,
    )


def bind(port: int) -> socket.socket:
    """A listening socket on 127.0.0.1:`port` (0: any free port); never another interface."""
    sock = socket.socket(socket.AF_INET, socket.SOCK_STREAM)
    try:
        sock.bind(("127.0.0.1", port))
    except OSError as exc:
        sock.close()
        raise BrainError(
            f"cannot listen on 127.0.0.1:{port}: {exc.strerror}",
            "pick another port with --port N, or leave it out for any free one",
        ) from None
    sock.listen(64)
    return sock


def serve(desk: Desk, sock: socket.socket, *, idle: float = IDLE_SECONDS) -> str:
    """Serve until Ctrl-C or `idle` seconds without a request; returns why it stopped."""
    import uvicorn

    config = uvicorn.Config(
        create_app(desk),
        log_level="warning",
        access_log=False,
        lifespan="off",
        proxy_headers=False,
        server_header=False,
    )
    server = uvicorn.Server(config)
    why = ["interrupted"]

    def watch() -> None:
        while not server.should_exit:
            if desk.stopping:
                server.should_exit = True
                return
            if time.monotonic() - desk.last > idle:
                why[0] = f"idle for {idle:g} s"
                server.should_exit = True
                return
            time.sleep(min(1.0, idle / 4))

    threading.Thread(target=watch, daemon=True).start()
    try:
        server.run(sockets=[sock])
    except KeyboardInterrupt:
        # uvicorn shuts down cleanly on Ctrl-C, then raises the signal again for the caller:
        # Ctrl-C is how a person closes the desk, not an abort
        return "interrupted"
    # uvicorn handles SIGTERM itself while it runs, then raises it again for stopped_by_signals
    return desk.stopping or why[0]


@contextlib.contextmanager
def stopped_by_signals(desk: Desk) -> Iterator[None]:
    """SIGTERM (`kill`) and SIGHUP (the terminal closed) stop the desk as Ctrl-C does, through
    the caller's `finally` (which removes the start page holding the token), not at once: also
    one that comes before the server runs (the desk then stops as soon as it starts)."""
    if threading.current_thread() is not threading.main_thread():
        yield
        return

    def stop(signum: int, _frame: object) -> None:
        desk.stopping = "terminated" if signum == signal.SIGTERM else "hung up"

    signals = [s for s in (signal.SIGTERM, getattr(signal, "SIGHUP", None)) if s is not None]
    saved = {sig: signal.signal(sig, stop) for sig in signals}
    try:
        yield
    finally:
        for sig, handler in saved.items():
            signal.signal(sig, handler)
