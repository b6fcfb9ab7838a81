"""`brain mcp`: brain over the Model Context Protocol, for agents without a shell: on stdio, or
with `--http` on streamable HTTP behind a bearer token (agents in containers, remote development).

Each tool calls the command and then its presenter (brain.present), as `brain find ...` does for
an agent: the tool's text is the agent format the CLI prints, the structured content the object
`--json` prints, both from the one result, so tools and commands cannot drift. Each tool declares
the schema of that object (`outputSchema`, read off the result's dataclass by
brain.present.schema) and annotations saying whether it writes. The server names itself with
brain's version and advertises the one capability it serves, tools. Lookups are logged once,
with the caller `mcp:<client name>`, the name the client gave in `initialize`
(clientInfo.name), and the server's session.

Nothing reaches stdout outside the protocol: the SDK serves the wire from a private copy of fd 1
and points fd 1 at stderr, and no tool writes to stdout or stderr (errors are tool errors). The SDK
runs each tool in a worker thread, and two calls may overlap; the commands were written for one
call at a time per process (lazily loaded state such as the embedding model, the stale-unit cache
and the index's build-on-demand are not guarded for threads), so tool runs are serialised by one
lock. The streams and the environment are no longer touched.

This module imports the SDK (about a second) and is imported only by `brain mcp`.
"""

from __future__ import annotations

import contextlib
import dataclasses
import importlib.util
import json
import os
import re
import sys
import threading
import time
from collections.abc import Callable, Iterator
from pathlib import Path
from typing import Annotated, Any

import anyio
from mcp.server.mcpserver import Context, MCPServer
from mcp.server.mcpserver.exceptions import ToolError
from mcp.server.mcpserver.tools import Tool
from mcp.server.stdio import stdio_server
from mcp.shared.message import SessionMessage
from mcp.types import (
    INVALID_REQUEST,
    PARSE_ERROR,
    CallToolResult,
    ErrorData,
    JSONRPCError,
    TextContent,
    ToolAnnotations,
    jsonrpc_message_adapter,
)
from pydantic import Field, ValidationError

from brain.caller import MCP_CALLER, Caller
from brain.crash import crash_report
from brain.errors import BrainError
from brain.present import Answer, data, record, sanitized, scrubbed, size
from brain.settings import current
from brain.text import printable

INSTRUCTIONS = (
    "brain is the user's memory: facts (bullets) and notes from a git vault of Markdown. "
    "Call `find` before guessing about the user's projects, machines, people or preferences; "
    "`locate` gives a bullet's file and line; `propose` suggests a new fact for a person to review."
)

_LOCK = threading.Lock()


def client_name(ctx: Context | None) -> str:
    """The client's own name from `initialize` (clientInfo.name), else "unknown"; escaped
    (brain.text.printable): `brain log`, the ledger and the desk print it as the caller."""
    if ctx is None:
        return "unknown"
    try:
        params = ctx.session.client_params
    except (AttributeError, ValueError, RuntimeError):
        return "unknown"
    name = params.client_info.name if params is not None else ""
    return printable(name.strip()) or "unknown"


class Server:
    """The tools, bound to a vault (None: resolved as the CLI resolves it)."""

    def __init__(self, vault: str | None = None) -> None:
        self.vault = vault
        # one server process is one agent session unless the agent's environment says otherwise
        self.session = current().session or f"mcp-{os.getpid()}-{int(time.time())}"

    def caller(self, ctx: Context | None) -> Caller:
        """Who asks: the client, by its name, as an agent (terse lines). On HTTP one server serves
        several agents, so each connection is its own session: its Mcp-Session-Id, which the
        server made (the SDK routes a request by it and answers 404 to one it did not make); on
        stdio the process is the one client's."""
        try:
            headers = ctx.headers if ctx is not None else None
        except (AttributeError, ValueError, RuntimeError):
            headers = None
        connection = headers.get("mcp-session-id") if headers is not None else None
        session = f"mcp-{printable(connection)}" if connection else self.session
        return Caller(f"{MCP_CALLER}{client_name(ctx)}", session, agent=True)

    def path(self) -> Path:
        from brain.config import resolve_vault

        return resolve_vault(self.vault)

    def team(self) -> bool:
        """Whether propose reaches the shared remote (`proposals: team`), as the vault says when
        the server starts; a server started before a vault exists says it does not."""
        from brain.config import proposals_mode

        try:
            return proposals_mode(self.path()) == "team"
        except BrainError:
            return False

    def call(self, answer: Callable[[], tuple[Answer, Any]]) -> CallToolResult:
        """Run a tool: its answer as text (logged as the CLI logs it), its JSON as structure,
        both through the CLI's output step (brain.present: `sanitized`, `scrubbed`). A command's
        error is a tool error with the line the CLI would print."""
        try:
            with _LOCK:
                shown, doc = answer()
                record(shown.lookup, size(shown.text))
        except BrainError as exc:
            raise ToolError(sanitized(str(exc))) from None
        except ToolError:
            raise
        except Exception as exc:  # as cli.execute: a line and a crash report, never a traceback
            raise ToolError(
                sanitized(
                    f"internal error ({type(exc).__name__}: {exc}); details in "
                    f"{crash_report(exc, [])}; please report it"
                )
            ) from None
        text = sanitized(shown.text).rstrip("\n") or f"(nothing; exit status {shown.code})"
        return CallToolResult(
            content=[TextContent(type="text", text=text)], structured_content=scrubbed(doc)
        )


def _require(module: str) -> None:
    if importlib.util.find_spec(f"brain.commands.{module}") is None:
        raise ToolError(
            f"`brain {module}` is not part of this brain ({brain_version()}); "
            "update brain to use this tool"
        )


def brain_version() -> str:
    """brain's version as `brain version` prints it (`dev-2026-09`, `dev (5a15471359dd)`): the
    server's `serverInfo.version`. The package's own number (`brain.__version__`) is a
    placeholder that never changes between releases, so a client could not tell two apart."""
    from brain.commands.version import version

    found = version()
    return f"{found.version} ({found.commit})" if found.commit else found.version


# MCP tool annotations (https://modelcontextprotocol.io/specification/2025-11-25/server/tools,
# schema.ts `ToolAnnotations`): hints a client may show or act on (asking before a call that
# writes). find, locate, recall and pack read the vault or the transcripts (their usage-log row
# is brain's own bookkeeping in its state dir, not a change to the user's world); propose appends
# a line to AI/INBOX.md for a person to approve, never replacing anything, and proposing the same
# line again adds nothing. None of them reaches past this machine, except propose in a vault whose
# AI/config.yaml says `proposals: team`: there it pushes a branch to the shared remote.
READS = ToolAnnotations(read_only_hint=True, open_world_hint=False)
PROPOSES = ToolAnnotations(
    read_only_hint=False, destructive_hint=False, idempotent_hint=True, open_world_hint=False
)
PROPOSES_TO_TEAM = PROPOSES.model_copy(update={"open_world_hint": True})

# The server serves tools only: the SDK registers prompt and resource handlers of its own (empty
# lists), and advertises a capability for each handler it has (mcp/server/lowlevel/server.py,
# `get_capabilities`). A client must not be told of capabilities nobody serves.
NOT_SERVED = (
    "prompts/list",
    "prompts/get",
    "resources/list",
    "resources/templates/list",
    "resources/read",
    "resources/subscribe",
    "resources/unsubscribe",
)


def _tool(
    fn: Callable[..., CallToolResult],
    title: str,
    description: str,
    annotations: ToolAnnotations,
    output: dict[str, Any],
) -> Tool:
    """A tool whose `outputSchema` is `output` (brain.present.schema: the schema of the result
    its structured content is built from). The SDK takes a hand-made schema on the tool's
    metadata (mcp/server/mcpserver/utilities/func_metadata.py, FuncMetadata: "a schema
    published without a model ... is advertised but not validated here")."""
    tool = Tool.from_function(fn, title=title, description=description, annotations=annotations)
    tool.fn_metadata.output_schema = output
    return tool


def build(vault: str | None = None, bearer: Bearer | None = None) -> MCPServer:
    """The MCP server with brain's tools (`vault`: the server's --vault, else as the CLI does);
    with `bearer`, its HTTP app admits only requests that carry that token.

    A tool's text content is what the CLI prints for an agent (terse lines, `Proposed as #N`),
    not the serialized JSON the specification suggests for clients that predate structured
    content: agents read the text, and the lines carry the same result in a fraction of the
    tokens. The JSON object is the structured content, described by the tool's outputSchema."""
    server = Server(vault)
    tools = [make(server) for make in (_find, _locate, _recall, _pack, _propose)]
    mcp = MCPServer(
        "brain",
        version=brain_version(),
        instructions=INSTRUCTIONS,
        log_level="WARNING",
        tools=tools,
        subscriptions=False,  # nothing changes under a client: no list_changed to listen for
        token_verifier=bearer,
        auth=bearer.settings() if bearer is not None else None,
    )
    handlers = mcp._lowlevel_server._request_handlers  # the SDK has no call to remove one
    for method in NOT_SERVED:
        handlers.pop(method, None)
    return mcp


def _find(server: Server) -> Tool:
    from brain.present.hits import FindDoc, HitDoc
    from brain.present.schema import schema

    def find(
        query: Annotated[str, Field(description="What to look for, in plain words.")],
        ctx: Context,
        limit: Annotated[
            int | None,
            Field(
                description="The ranked list, at most this many hits, instead of the answer"
                " (what stands out).",
                ge=1,
            ),
        ] = None,
        budget: Annotated[
            int | None, Field(description="Byte cap on the answer (default 2400).", ge=1)
        ] = None,
    ) -> CallToolResult:
        def answer() -> tuple[Answer, Any]:
            from brain.answers import find_within
            from brain.present import hits

            result, cap, path = find_within(server.vault, query.strip(), limit, budget)
            shown = hits.find(result, server.caller(ctx), path, budget=cap)
            return shown, json.loads(hits.find_json(result, cap)[0])

        return server.call(answer)

    return _tool(
        find,
        "Find in the memory",
        "Find the bullets and notes in the user's memory that answer a question. "
        "Returns one line per hit: `path:line handle — fact — date`.",
        READS,
        schema(FindDoc, override={"hits": tuple[HitDoc, ...]}),  # built as HitDoc's dicts
    )


def _locate(server: Server) -> Tool:
    from brain.commands.locate import LocateResult, VaultFound
    from brain.present.schema import one_of, schema

    def locate(
        ctx: Context,
        handle: Annotated[
            str | None,
            Field(description="The bullet's handle or an alias; none: the vault's folder."),
        ] = None,
    ) -> CallToolResult:
        def answer() -> tuple[Answer, Any]:
            from brain.commands import locate as cmd
            from brain.present import transfer as present

            if handle is None:
                found = cmd.where(server.vault)
                return present.vault_found(found), data(found)
            result = cmd.locate(server.path(), handle)
            return present.locate(result), data(result)

        return server.call(answer)

    return _tool(
        locate,
        "Locate a bullet",
        "Where a bullet lives: `path:line` and its line as written. Give its handle or an "
        "alias (case and accents do not matter; `M#`, `L#`, `T#` narrow it to one file). "
        "Without a handle: the vault's folder, where those paths start.",
        READS,
        one_of(schema(LocateResult), schema(VaultFound)),
    )


def _recall(server: Server) -> Tool:
    from brain.commands.recall import FullTurn
    from brain.present.recall import RecallDoc
    from brain.present.schema import one_of, schema
    from brain.recall.search import Hit

    def recall(
        ctx: Context,
        query: Annotated[str, Field(description="What was said, in plain words.")] = "",
        limit: Annotated[int | None, Field(description="At most this many hits.", ge=1)] = None,
        full: Annotated[
            str | None, Field(description="A turn's id from a listing: that turn in full.")
        ] = None,
    ) -> CallToolResult:
        _require("recall")

        def answer() -> tuple[Answer, Any]:
            # transcripts live in the state dir, not the vault: no vault here
            from brain.commands import recall as cmd
            from brain.commands.recall import mode_of
            from brain.present import recall as present

            if full is not None:
                turn = cmd.full(full)
                return present.full(turn), data(turn)
            text = query.strip()
            mode_of(text)  # nothing asked: the CLI's usage error
            who = server.caller(ctx)
            result = cmd.recall(text, limit=limit or 10, exclude_session=who.session)
            doc = json.loads(present.recall(result, who, text, as_json=True).text)
            return present.recall(result, who, text), doc

        return server.call(answer)

    return _tool(
        recall,
        "Recall past sessions",
        "Search what was said in the user's past agent sessions (brain recall: transcripts "
        "the user opted in to). Returns snippets of the matching turns, best first, each led "
        "by its id; pass `full` with an id instead of `query` for that whole turn.",
        READS,
        one_of(schema(RecallDoc, names={"Hit": Hit}), schema(FullTurn)),
    )


def _pack(server: Server) -> Tool:
    from brain.commands.pack import PackResult
    from brain.present.schema import schema

    def pack(
        ctx: Context,
        project: Annotated[
            str | None,
            Field(description="The project (default: the repository the server runs in)."),
        ] = None,
        budget: Annotated[
            int | None, Field(description="Token cap on the pack (default 1500).", ge=1)
        ] = None,
    ) -> CallToolResult:
        _require("pack")

        def answer() -> tuple[Answer, Any]:
            from brain.answers import pack_for
            from brain.present import pack as present

            who = server.caller(ctx)
            found = pack_for(project or None, server.vault, budget, fresh=False, cwd=Path.cwd())
            if found.result is None:  # not in a repository: what `brain pack` prints (nothing)
                return Answer(), data(found.empty)
            shown = present.pack(found.result, who, found.vault, found.project)
            return shown, data(found.result)

        return server.call(answer)

    return _tool(
        pack,
        "Brief a project",
        "The briefing to open a project with (brain pack): its bullets, the working rules, "
        "the newest handoff and its state, within a token budget.",
        READS,
        schema(PackResult),
    )


def _propose(server: Server) -> Tool:
    from brain.commands.propose import ProposeResult
    from brain.present.schema import schema

    def propose(
        line: Annotated[str, Field(description="The bullet: `handle — fact`.")],
        ctx: Context,
        to: Annotated[
            str | None,
            Field(description="The core file: MEMORY (default), LEARNINGS or TUNINGS."),
        ] = None,
        force: Annotated[
            bool,
            Field(
                description="A deliberate correction of the bullet that has this handle already "
                "(approving it replaces that bullet); without it such a line is refused."
            ),
        ] = False,
    ) -> CallToolResult:
        _require("propose")

        def answer() -> tuple[Answer, Any]:
            from brain.commands.propose import propose
            from brain.present import inbox as present

            who = server.caller(ctx)
            result = propose(server.path(), line, to=to or None, source=who.name, force=force)
            return present.propose(result), data(result)  # `Proposed as #N: ...`, as the CLI

        return server.call(answer)

    shared = server.team()
    waits = (
        "it goes to the team's shared remote as a branch of its own for a person to approve"
        if shared
        else "it waits in AI/INBOX.md for a person to approve"
    )
    return _tool(
        propose,
        "Propose a fact",
        f"Propose a bullet for the memory (brain propose): {waits}. Write it as `handle — fact`; "
        "you become its source and today its date. Proposing what the vault already holds adds "
        "nothing; a handle a bullet already has is refused unless `force` says the line corrects "
        "that bullet.",
        PROPOSES_TO_TEAM if shared else PROPOSES,
        schema(ProposeResult),
    )


def serve(vault: str | None = None) -> None:
    """Serve on stdio until the client closes the connection."""
    if sys.stdin is None or sys.stdout is None:
        raise RuntimeError("brain mcp needs stdin and stdout (a client spawns it)")
    anyio.run(_run_stdio, build(vault))


async def _run_stdio(mcp: MCPServer) -> None:
    """The SDK's `run("stdio")`, with `Checked` lines and `Mended` between the wire and the
    server."""
    server = mcp._lowlevel_server  # the SDK's run_stdio_async does the same
    with _wire_in() as wire:
        async with stdio_server(stdin=Checked(wire)) as (read, write):  # type: ignore[arg-type]
            options = server.create_initialization_options()
            await server.run(Mended(read, write), write, options)


@contextlib.contextmanager
def _wire_in() -> Iterator[anyio.AsyncFile[str]]:
    """stdin's wire for the reader, fd 0 pointed at the null device meanwhile: as the SDK's
    stdio_server does when it opens stdin itself (mcp/server/stdio.py, _claim_fd), which it
    does not when given its stdin, so a tool's child process reads EOF, never the protocol.
    The wire is never closed: a reader thread may still block on it when the server stops."""
    import io

    wire = os.dup(0)  # not inherited by children (PEP 446)
    null = os.open(os.devnull, os.O_RDONLY)
    os.dup2(null, 0)
    os.close(null)
    try:
        text = io.TextIOWrapper(
            os.fdopen(wire, "rb", closefd=False), encoding="utf-8", errors="replace"
        )
        yield anyio.wrap_file(text)
    finally:
        with contextlib.suppress(OSError):
            os.dup2(wire, 0)


# A line Checked refuses reaches the SDK's reader as this, then the code: no JSON parser takes it,
# and Mended answers it.
_REFUSED = "\x00brain refused "


def refusal(line: str) -> int | None:
    """The JSON-RPC error a line gets before the SDK reads it, None when the SDK judges it.

    The SDK reads a request whose id is not a string or an integer (`"id": NaN`, `1.5`, `2.0`,
    `null`, `true`) as a notification, which gets no answer (JSON-RPC 2.0, 4.1): the client
    waited for ever. JSON-RPC 2.0 (https://www.jsonrpc.org/specification, 5 and 5.1) answers
    an invalid request with an error whose id is null when the id cannot be told: -32600
    Invalid Request, or -32700 Parse error for what is not JSON, which NaN and Infinity are not
    (RFC 8259, 6); MCP asks of a request "a string or integer ID ... MUST NOT be null"
    (https://modelcontextprotocol.io/specification/2025-06-18/basic)."""
    try:
        doc = json.loads(line, parse_constant=_no_constant)
    except (ValueError, RecursionError):
        return PARSE_ERROR
    if not isinstance(doc, dict) or "id" not in doc or "method" not in doc:
        return None  # a notification, a response, or what the SDK refuses and Mended answers
    rid = doc["id"]
    return None if isinstance(rid, str | int) and not isinstance(rid, bool) else INVALID_REQUEST


class Checked:
    """The wire's lines, each first checked by `refusal`: a refused one goes on as `_REFUSED`
    and its code, which the SDK's parser refuses in turn and Mended answers, in its place."""

    def __init__(self, wire: anyio.AsyncFile[str]) -> None:
        self._lines = wire.__aiter__()

    def __aiter__(self) -> Checked:
        return self

    async def __anext__(self) -> str:
        line = await self._lines.__anext__()
        code = refusal(line)
        return line if code is None else f"{_REFUSED}{code}\n"


_SURROGATE = re.compile("[\ud800-\udfff]")


class Mended:
    """The SDK's read stream, with what its parser refuses answered as JSON-RPC asks rather than
    dropped (the client would wait for ever): a line that is not JSON gets the -32700 parse
    error, JSON that is not a message -32600, as do the lines `Checked` refused (a request whose
    id is not a string or an integer, with the id null); a lone surrogate escape (`\\ud800`,
    which Node writes when it cuts a string mid-emoji) becomes U+FFFD and the message is
    served."""

    def __init__(self, inner: Any, write: Any) -> None:
        self._inner = inner
        self._write = write

    @property
    def last_context(self) -> Any:
        return getattr(self._inner, "last_context", None)

    async def receive(self) -> SessionMessage | Exception:
        while True:
            item = await self._inner.receive()
            if not isinstance(item, ValidationError):
                return item  # type: ignore[no-any-return]
            mended = mend(item)
            if isinstance(mended, SessionMessage):
                return mended
            await self._write.send(SessionMessage(mended))

    async def aclose(self) -> None:
        await self._inner.aclose()

    def __aiter__(self) -> Mended:
        return self

    async def __anext__(self) -> SessionMessage | Exception:
        try:
            return await self.receive()
        except anyio.EndOfStream:
            raise StopAsyncIteration from None

    async def __aenter__(self) -> Mended:
        return self

    async def __aexit__(self, *exc: object) -> None:
        await self.aclose()


def mend(error: ValidationError) -> SessionMessage | JSONRPCError:
    """The message a refused line holds once its lone surrogates are replaced, else the error
    to send back, as the protocol asks."""
    details = error.errors()
    if details and details[0]["type"] == "json_invalid" and isinstance(details[0]["input"], str):
        refused = details[0]["input"]
        if refused.startswith(_REFUSED):
            code = int(refused[len(_REFUSED) :])
            return _rpc_error(
                None, code, "Parse error" if code == PARSE_ERROR else "Invalid Request"
            )
        try:
            doc = json.loads(details[0]["input"], parse_constant=_no_constant)
            doc = _replace_surrogates(doc)
        except (ValueError, RecursionError):
            return _rpc_error(None, PARSE_ERROR, "Parse error")
        try:
            return SessionMessage(jsonrpc_message_adapter.validate_python(doc, by_name=False))
        except ValidationError:
            return _rpc_error(_request_id(doc), INVALID_REQUEST, "Invalid Request")
    found = [d["input"] for d in details if len(d["loc"]) <= 2 and isinstance(d["input"], dict)]
    return _rpc_error(_request_id(found[0] if found else None), INVALID_REQUEST, "Invalid Request")


def _no_constant(name: str) -> Any:
    raise ValueError(f"{name} is not JSON")


def _replace_surrogates(value: Any) -> Any:
    if isinstance(value, str):
        return _SURROGATE.sub("\ufffd", value)
    if isinstance(value, list):
        return [_replace_surrogates(v) for v in value]
    if isinstance(value, dict):
        return {_replace_surrogates(k): _replace_surrogates(v) for k, v in value.items()}
    return value


def _request_id(doc: Any) -> str | int | None:
    rid = doc.get("id") if isinstance(doc, dict) else None
    return rid if isinstance(rid, str | int) and not isinstance(rid, bool) else None


def _rpc_error(rid: str | int | None, code: int, message: str) -> JSONRPCError:
    return JSONRPCError(jsonrpc="2.0", id=rid, error=ErrorData(code=code, message=message))


# --- streamable HTTP ------------------------------------------------------------------------------
#
# The SDK serves the transport (mcp/server/streamable_http.py) and checks what it can: Host and
# Origin against TransportSecuritySettings (421, 403; mcp/server/transport_security.py), the body
# against a bound (RequestBodyLimitMiddleware, 413), the bearer token through its auth hooks
# (BearerAuthBackend and RequireAuthMiddleware asking our TokenVerifier, 401;
# mcp/server/auth/middleware/bearer_auth.py). brain adds the token, the names clients may use,
# and the socket.

DEFAULT_PORT = 8417
# A tool call's arguments are a few hundred bytes; the SDK's own bound is 4 MiB.
MAX_BODY = 1024 * 1024
# A connection must send a request's headers within this many seconds of opening or of its last
# request, else it is closed: each holds one of the server's files, and a client that holds many
# open without asking (slowloris) needs no token to do it.
HEADER_SECONDS = 10.0
# Connections the kernel queues before the server accepts them, and so the most one pass of the
# event loop accepts at once (asyncio accepts `backlog` before any is seen: uvicorn's 2048 would
# open that many files in one go).
BACKLOG = 64
# The variable Codex reads the token from: `bearer_token_env_var` of a streamable HTTP server
# (openai/codex docs/config.md, "MCP integration", "Streamable HTTP").
TOKEN_VARIABLE = "BRAIN_MCP_TOKEN"  # noqa: S105 - a variable's name, not its value
_TOKEN = re.compile(r"[A-Za-z0-9_-]{32,512}")
_LOOPBACK_NAMES = ("127.0.0.1", "localhost", "[::1]")


class Bearer:
    """The SDK's TokenVerifier (mcp/server/auth/provider.py) for brain's one token, compared in
    constant time. `issuer` is the server's own URL: the SDK's AuthSettings asks for one, and
    with no authorization server and no resource URL nothing advertises it."""

    def __init__(self, token: str, issuer: str) -> None:
        self._token = token.encode("ascii")
        self.issuer = issuer

    async def verify_token(self, token: str) -> Any:
        import hmac

        from mcp.server.auth.provider import AccessToken

        # Starlette decodes headers as latin-1, so every character encodes
        if hmac.compare_digest(token.encode("latin-1", "replace"), self._token):
            return AccessToken(token=token, client_id="brain-token", scopes=[])
        return None

    def settings(self) -> Any:
        from mcp.server.auth.settings import AuthSettings
        from pydantic import AnyHttpUrl

        return AuthSettings(issuer_url=AnyHttpUrl(self.issuer), resource_server_url=None)


def token_path() -> Path:
    """Where the HTTP server's bearer token lives: brain's state dir (0700), file 0600."""
    from brain.config import state_dir

    return state_dir() / "mcp-token"


def token(path: Path) -> str:
    """The bearer token in `path`, made when there is none: written whole to a private temp file
    (0600 from its creation), then linked into place, which never replaces a file: of two servers
    starting at once, both serve the first token. A token is kept across restarts, so an agent
    registered once stays registered; deleting the file makes a new one."""
    import secrets

    with contextlib.suppress(FileNotFoundError):
        return _read_token(path)
    tmp = path.with_name(f".{path.name}.{secrets.token_hex(4)}.tmp")
    try:
        fd = os.open(tmp, os.O_WRONLY | os.O_CREAT | os.O_EXCL | _NOFOLLOW, 0o600)
        try:
            with os.fdopen(fd, "w", encoding="ascii") as fh:
                fh.write(secrets.token_urlsafe(32) + "\n")
                fh.flush()
                os.fsync(fh.fileno())
            with contextlib.suppress(FileExistsError):
                os.link(tmp, path)
        finally:
            with contextlib.suppress(OSError):
                tmp.unlink()
    except OSError as exc:
        raise BrainError(
            f"cannot write the MCP token file {printable(str(path))}: {exc.strerror or exc}",
            f"make {printable(str(path.parent))} writable by you, or set BRAIN_STATE elsewhere",
        ) from None
    return _read_token(path)


_NOFOLLOW = getattr(os, "O_NOFOLLOW", 0)


def _read_token(path: Path) -> str:
    """The token `path` holds; a BrainError when the file is not one only its owner can read
    (FileNotFoundError when there is none)."""
    import errno
    import stat

    shown = printable(str(path))
    renew = "delete it and start again for a new token (then register your agents again)"
    try:
        fd = os.open(path, os.O_RDONLY | _NOFOLLOW)
    except FileNotFoundError:
        raise
    except OSError as exc:
        if exc.errno == errno.ELOOP:
            raise BrainError(
                f"the MCP token file {shown} is a symbolic link: brain does not follow it", renew
            ) from None
        raise BrainError(f"cannot read the MCP token file {shown}: {exc.strerror}", renew) from None
    try:
        info = os.fstat(fd)  # of the file opened, not of what the name holds a moment later
        if not stat.S_ISREG(info.st_mode):
            raise BrainError(f"the MCP token file {shown} is not a file", renew)
        if hasattr(os, "getuid") and info.st_uid != os.getuid():
            raise BrainError(f"the MCP token file {shown} belongs to another user", renew)
        if hasattr(os, "getuid") and info.st_mode & 0o077:
            raise BrainError(
                f"the MCP token file {shown} can be read by others "
                f"(mode {stat.S_IMODE(info.st_mode):04o}), so the token may be known",
                renew,
            )
        raw = os.read(fd, 4096)
    finally:
        os.close(fd)
    found = raw.decode("ascii", "replace").strip()
    if not _TOKEN.fullmatch(found):
        raise BrainError(f"the MCP token file {shown} holds no token brain wrote", renew)
    return found


def loopback(host: str) -> bool:
    """Whether `host` (an address or `localhost`) reaches this machine only."""
    import ipaddress

    if host.lower() == "localhost":
        return True
    try:
        return ipaddress.ip_address(host.strip("[]")).is_loopback
    except ValueError:
        return False


def _name(host: str) -> str:
    """`host` as it stands in a Host header or a URL: an IPv6 address in brackets."""
    return f"[{host}]" if ":" in host and not host.startswith("[") else host


def _everywhere(host: str) -> bool:
    """Whether `host` is the address of every interface (0.0.0.0, ::)."""
    import ipaddress

    try:
        return ipaddress.ip_address(host.strip("[]")).is_unspecified
    except ValueError:
        return False


def host_names(host: str, also: tuple[str, ...] = ()) -> tuple[str, ...]:
    """The names a client may call the server by (its Host header without the port): loopback's
    always (the server is reached from this machine too), the address it listens on, this
    machine's name instead when it listens on every interface, and those `--allow-host` adds."""
    import socket

    names = list(_LOOPBACK_NAMES)
    if _everywhere(host):
        names += [socket.gethostname(), socket.getfqdn(), *map(_name, _own_addresses())]
    else:
        names.append(_name(host))
    names += [_name(n) for n in also]
    return tuple(dict.fromkeys(n.lower() for n in names if n))


def _own_addresses() -> list[str]:
    """This machine's addresses a client on the network may call it by: those its names resolve
    to, and the one its traffic leaves from (a UDP socket's connect picks the route and sends
    nothing; 192.0.2.1 and 2001:db8::1 are documentation addresses, never reached). Others take
    --allow-host."""
    import socket

    found: list[str] = []
    for name in dict.fromkeys((socket.gethostname(), socket.getfqdn())):
        try:
            found += [str(a[4][0]) for a in socket.getaddrinfo(name, None, type=socket.SOCK_STREAM)]
        except (OSError, UnicodeError):
            continue
    for family, probe in ((socket.AF_INET, "192.0.2.1"), (socket.AF_INET6, "2001:db8::1")):
        try:
            with socket.socket(family, socket.SOCK_DGRAM) as s:
                s.connect((probe, 9))
                found.append(str(s.getsockname()[0]))
        except OSError:
            continue
    return [a.split("%")[0] for a in found if not _everywhere(a)]


def url_name(host: str, hosts: tuple[str, ...]) -> str:
    """The name the printed URL uses: the address listened on, or for every interface this
    machine's name (loopback's when it has no other)."""
    if not _everywhere(host):
        return _name(host).lower()
    return next((n for n in hosts if n not in _LOOPBACK_NAMES), _LOOPBACK_NAMES[0])


def listen(host: str, port: int) -> Any:
    """A listening socket on `host`:`port` (0: any free port), or a BrainError saying why not."""
    import socket

    try:
        family, kind, proto, _, address = socket.getaddrinfo(
            host.strip("[]"), port, type=socket.SOCK_STREAM
        )[0]
    except (OSError, UnicodeError) as exc:
        raise BrainError(
            f"cannot listen on {printable(host)}: {getattr(exc, 'strerror', None) or exc}",
            "give --host an address of this machine (the default, 127.0.0.1: this machine only)",
        ) from None
    sock = socket.socket(family, kind, proto)
    try:
        sock.setsockopt(socket.SOL_SOCKET, socket.SO_REUSEADDR, 1)
        sock.bind(address)
        sock.listen(BACKLOG)
    except OSError as exc:
        sock.close()
        raise BrainError(
            f"cannot listen on {printable(_name(host))}:{port}: {exc.strerror or exc}",
            "is another `brain mcp --http` running? pick another port with --port N",
        ) from None
    return sock


def most_connections() -> int:
    """How many connections the server holds at once: half the files this process may open
    once one batch of accepts is set aside (the rest serve the vault, the index and git), at
    least 16, at most 1024."""
    try:
        import resource

        soft = resource.getrlimit(resource.RLIMIT_NOFILE)[0]
    except (ImportError, OSError, ValueError):  # Windows has no `resource`
        return 512
    if soft == resource.RLIM_INFINITY or soft <= 0:
        return 1024
    return max(16, min(1024, (soft - BACKLOG) // 2))


def guarded_protocol() -> type[Any]:
    """uvicorn's h11 protocol (uvicorn/protocols/http/h11_impl.py) with the two bounds its Config
    lacks. Its keep-alive timer starts only once a response is sent, so a connection that never
    finishes a request is held for good; and with no bound on connections, idle ones use up the
    process's files until accepting fails (EMFILE) and the server dies. Here a connection that
    starts no request within HEADER_SECONDS is closed, and past most_connections() a newcomer
    pushes out the oldest connection that waits for a request (itself when all are busy), so a
    client that asks is served while idle ones come and go."""
    import itertools

    from uvicorn.protocols.http.h11_impl import H11Protocol

    most = most_connections()
    order = itertools.count()  # not the loop's clock: one batch of accepts shares its time

    class Guarded(H11Protocol):
        _timer: Any = None
        _seen: Any = None  # the request cycle the last look found
        _since = 0

        def connection_made(self, transport: Any) -> None:
            super().connection_made(transport)
            self._since = next(order)
            self._timer = self.loop.call_later(HEADER_SECONDS, self._look)
            # one that is closing still counts until the loop's next pass says it is lost
            live = [c for c in self.connections if not c.transport.is_closing()]
            if len(live) > most:
                idle = [c for c in live if isinstance(c, Guarded) and c._idle()]
                min(idle, key=lambda c: c._since, default=self).transport.close()

        def connection_lost(self, exc: Exception | None) -> None:
            if self._timer is not None:
                self._timer.cancel()
            super().connection_lost(exc)

        def _idle(self) -> bool:
            """No request in progress: it waits for one, or for the rest of its headers."""
            return self.cycle is None or self.cycle.response_complete

        def _look(self) -> None:
            if self.transport.is_closing():
                return
            if self._idle() and self.cycle is self._seen:  # nothing asked since the last look
                self.transport.close()
                return
            self._seen = self.cycle
            self._timer = self.loop.call_later(HEADER_SECONDS, self._look)

    return Guarded


@dataclasses.dataclass(frozen=True)
class Listening:
    """What `brain mcp --http` serves, as it starts: the URL agents register, the file its token
    is in (never the token), where it listens, and the Host names it answers to."""

    url: str
    token_file: Path
    host: str
    loopback: bool
    hosts: tuple[str, ...]
    token_variable: str = TOKEN_VARIABLE


def _case_folded(app: Any) -> Any:
    """`app` with the Host and Origin headers in lower case: a host name's case means nothing
    (RFC 9110 section 4.2.3, RFC 6454 section 4), and the SDK's TransportSecuritySettings
    compares them as written (`LOCALHOST:8417` was a 421)."""

    async def folded(scope: Any, receive: Any, send: Any) -> None:
        if scope.get("type") == "http":
            headers = [
                (k, v.lower() if k in (b"host", b"origin") else v) for k, v in scope["headers"]
            ]
            scope = {**scope, "headers": headers}
        await app(scope, receive, send)

    return folded


def serve_http(
    vault: str | None,
    host: str,
    port: int,
    also: tuple[str, ...] = (),
    started: Callable[[Listening], None] = lambda _: None,
) -> None:
    """Serve brain's tools on streamable HTTP at /mcp until Ctrl-C; `started` hears where."""
    import uvicorn
    from mcp.server.transport_security import TransportSecuritySettings

    path = token_path()
    secret = token(path)
    sock = listen(host, port)
    try:
        port = sock.getsockname()[1]
        hosts = host_names(host, also)
        shown = url_name(host, hosts)
        url = f"http://{shown}:{port}/mcp"
        # Host is checked with the port (a page on another port of this machine is another
        # origin); a request without Origin is not a browser's and passes, as the SDK decides
        security = TransportSecuritySettings(
            enable_dns_rebinding_protection=True,
            allowed_hosts=[f"{n}:{port}" for n in hosts],
            allowed_origins=[f"http://{n}:{port}" for n in hosts],
        )
        app = build(vault, Bearer(secret, f"http://{shown}:{port}")).streamable_http_app(
            host=host, max_request_body_size=MAX_BODY, transport_security=security
        )
        config = uvicorn.Config(
            _case_folded(app),
            http=guarded_protocol(),
            backlog=BACKLOG,
            log_level="warning",
            access_log=False,
            proxy_headers=False,
            server_header=False,
            timeout_graceful_shutdown=3,  # an agent's open event stream does not hold the stop
        )
        started(Listening(url, path, host, loopback(host), hosts))
        with contextlib.suppress(KeyboardInterrupt):  # Ctrl-C is how a person stops it
            uvicorn.Server(config).run(sockets=[sock])
    finally:
        sock.close()
