"""`brain mcp`: brain over the Model Context Protocol on stdio, for agents without a shell.

Each tool runs the very command line an agent would type (`brain find ...`) through `brain.cli.main`
in this process, with stdout captured: the tool's text is what the command prints, so tools and
commands cannot drift. Read-only tools run a second time with `--json` (not logged again) for the
structured content; `propose`, which writes, runs once with `--json` and returns that object as
both. Lookups are logged with the caller `mcp:<client name>`, the name the client gave in
`initialize` (clientInfo.name).

Nothing reaches stdout outside the protocol: the SDK serves the wire from a private copy of fd 1
and points fd 1 at stderr, and while a tool runs `sys.stdout` is a buffer. Tool runs are serialised
(a lock), since they swap process-wide streams and environment.

This module imports the SDK (about a second) and is imported only by `brain mcp`.
"""

from __future__ import annotations

import contextlib
import importlib.util
import io
import json
import os
import re
import sys
import threading
import time
from dataclasses import dataclass
from typing import Annotated, Any

import anyio
from mcp.server.mcpserver import Context, MCPServer
from mcp.server.mcpserver.exceptions import ToolError
from mcp.server.stdio import stdio_server
from mcp.shared.message import SessionMessage
from mcp.types import (
    INVALID_REQUEST,
    PARSE_ERROR,
    CallToolResult,
    ErrorData,
    JSONRPCError,
    TextContent,
    jsonrpc_message_adapter,
)
from pydantic import Field, ValidationError

from brain import __version__

# Tools served by command modules other engineers own; a tool whose module is absent says so.
OPTIONAL = ("recall", "pack", "propose")
INSTRUCTIONS = (
    "brain is the user's memory: facts (bullets) and notes from a git vault of Markdown. "
    "Call `find` before guessing about the user's projects, machines, people or preferences; "
    "`locate` gives a bullet's file and line; `propose` suggests a new fact for a person to review."
)

_LOCK = threading.Lock()


@dataclass(frozen=True)
class Captured:
    code: int
    out: str
    err: str


def run_cli(args: list[str]) -> Captured:
    """Run `brain ARGS` in this process as an agent would; capture stdout, stderr, exit code."""
    from brain import cli

    out, err = io.StringIO(), io.StringIO()
    code = 0
    with contextlib.redirect_stdout(out), contextlib.redirect_stderr(err):
        try:
            cli.main(args)
        except SystemExit as exc:
            code = exc.code if isinstance(exc.code, int) else (0 if exc.code is None else 1)
    return Captured(code, out.getvalue(), err.getvalue())


def _one_line(err: str) -> str:
    lines = [line.strip() for line in err.strip().splitlines() if line.strip()]
    text = lines[-1] if lines else ""
    return text.removeprefix("brain: ")


def client_name(ctx: Context | None) -> str:
    """The client's own name from `initialize` (clientInfo.name), else "unknown"."""
    if ctx is None:
        return "unknown"
    try:
        params = ctx.session.client_params
    except (AttributeError, ValueError, RuntimeError):
        return "unknown"
    name = params.client_info.name if params is not None else ""
    return name.strip() or "unknown"


class Server:
    """The tools, bound to a vault (None: resolved as the CLI resolves it)."""

    def __init__(self, vault: str | None = None) -> None:
        self.vault = vault
        # one server process is one agent session unless the agent's environment says otherwise
        self.session = os.environ.get("BRAIN_SESSION") or f"mcp-{os.getpid()}-{int(time.time())}"

    def _vault_args(self) -> list[str]:
        return ["--vault", self.vault] if self.vault else []

    def call(
        self, ctx: Context | None, args: list[str], *, structured: bool = True, writes: bool = False
    ) -> CallToolResult:
        """Run `brain ARGS` for the client; the text as printed, the JSON object as structure."""
        from brain import usage

        env = {"BRAIN_CALLER": f"mcp:{client_name(ctx)}", "BRAIN_SESSION": self.session}
        with _LOCK, _environment(env):
            if writes:  # run once: the JSON answer is the text as well
                ran = run_cli(with_json(args))
                doc = _json(ran.out)
                if doc is None or "error" in doc:
                    raise ToolError(_error(ran, doc))
                return CallToolResult(
                    content=[TextContent(type="text", text=ran.out.rstrip("\n"))],
                    structured_content=doc,
                )
            ran = run_cli(args)
            if ran.code not in (0, 1) or (ran.code == 1 and ran.err.strip() and not ran.out):
                raise ToolError(_error(ran, None))
            doc = None
            if structured:
                with usage.muted():
                    doc = _json(run_cli(with_json(args)).out)
                if doc is not None and "error" in doc:
                    doc = None
        text = ran.out.rstrip("\n") or f"(nothing; exit status {ran.code})"
        return CallToolResult(content=[TextContent(type="text", text=text)], structured_content=doc)


def with_json(args: list[str]) -> list[str]:
    """`args` with `--json` among the options (before a `--` that ends them)."""
    at = args.index("--") if "--" in args else len(args)
    return [*args[:at], "--json", *args[at:]]


def _json(out: str) -> dict[str, Any] | None:
    try:
        doc = json.loads(out)
    except ValueError:
        return None
    return doc if isinstance(doc, dict) else None


def _error(ran: Captured, doc: dict[str, Any] | None) -> str:
    if doc is not None and isinstance(doc.get("error"), str):
        return str(doc["error"])
    return _one_line(ran.err) or _one_line(ran.out) or f"exit status {ran.code}"


@contextlib.contextmanager
def _environment(values: dict[str, str]) -> Any:
    before = {k: os.environ.get(k) for k in values}
    os.environ.update(values)
    try:
        yield
    finally:
        for k, v in before.items():
            if v is None:
                os.environ.pop(k, None)
            else:
                os.environ[k] = v


def _require(module: str) -> None:
    if importlib.util.find_spec(f"brain.commands.{module}") is None:
        raise ToolError(
            f"`brain {module}` is not part of this brain ({__version__}); "
            "update brain to use this tool"
        )


def build(vault: str | None = None) -> MCPServer:
    """The MCP server with brain's tools (`vault`: the server's --vault, else as the CLI does)."""
    server = Server(vault)
    mcp = MCPServer("brain", version=__version__, instructions=INSTRUCTIONS, log_level="WARNING")

    @mcp.tool(
        description="Find the bullets and notes in the user's memory that answer a question. "
        "Returns one line per hit: `path:line handle — fact — date`."
    )
    def find(
        query: Annotated[str, Field(description="What to look for, in plain words.")],
        ctx: Context,
        limit: Annotated[int | None, Field(description="At most this many hits.", ge=1)] = None,
        budget: Annotated[
            int | None, Field(description="Byte cap on the answer (default 2400).", ge=1)
        ] = None,
    ) -> CallToolResult:
        args = ["find", *server._vault_args()]
        if limit is not None:
            args += ["--limit", str(limit)]
        if budget is not None:
            args += ["--budget", str(budget)]
        return server.call(ctx, [*args, "--", query])

    @mcp.tool(
        description="Where a bullet lives: `path:line` and its line as written. Give its handle "
        "or an alias (case and accents do not matter; `M#`, `L#`, `T#` narrow it to one file)."
    )
    def locate(
        handle: Annotated[str, Field(description="The bullet's handle or an alias.")],
        ctx: Context,
    ) -> CallToolResult:
        return server.call(ctx, ["locate", *server._vault_args(), "--", handle])

    @mcp.tool(
        description="Search what was said in the user's past agent sessions (brain recall: "
        "transcripts the user opted in to). Returns snippets of the matching turns, best first, "
        "each led by its id; pass `full` with an id instead of `query` for that whole turn."
    )
    def recall(
        ctx: Context,
        query: Annotated[str, Field(description="What was said, in plain words.")] = "",
        limit: Annotated[int | None, Field(description="At most this many hits.", ge=1)] = None,
        full: Annotated[
            str | None, Field(description="A turn's id from a listing: that turn in full.")
        ] = None,
    ) -> CallToolResult:
        _require("recall")
        args = ["recall"]  # transcripts live in the state dir, not the vault: no --vault
        if full is not None:
            return server.call(ctx, [*args, f"--full={full}"])
        if limit is not None:
            args += ["--limit", str(limit)]
        return server.call(ctx, [*args, "--", query])

    @mcp.tool(
        description="The briefing to open a project with (brain pack): its bullets, the working "
        "rules, the newest handoff and its state, within a token budget."
    )
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
        args = ["pack", *server._vault_args()]
        if budget is not None:
            args += ["--budget", str(budget)]
        return server.call(ctx, [*args, "--", project] if project else args)

    @mcp.tool(
        description="Propose a bullet for the memory (brain propose): it waits in AI/INBOX.md "
        "for a person to approve. Write it as `handle — fact`; you become its source and today "
        "its date. Proposing what the vault already holds adds nothing."
    )
    def propose(
        line: Annotated[str, Field(description="The bullet: `handle — fact`.")],
        ctx: Context,
        to: Annotated[
            str | None,
            Field(description="The core file: MEMORY (default), LEARNINGS or TUNINGS."),
        ] = None,
    ) -> CallToolResult:
        _require("propose")
        args = ["propose", *server._vault_args()]
        if to:
            args += ["--to", to]
        return server.call(ctx, [*args, "--", line], writes=True)

    return mcp


def serve(vault: str | None = None) -> None:
    """Serve on stdio until the client closes the connection."""
    if sys.stdin is None or sys.stdout is None:
        raise RuntimeError("brain mcp needs stdin and stdout (a client spawns it)")
    anyio.run(_run_stdio, build(vault))


async def _run_stdio(mcp: MCPServer) -> None:
    """The SDK's `run("stdio")`, with `Mended` between the wire and the server."""
    server = mcp._lowlevel_server  # the SDK's run_stdio_async does the same
    async with stdio_server() as (read, write):
        options = server.create_initialization_options()
        await server.run(Mended(read, write), write, options)


_SURROGATE = re.compile("[\ud800-\udfff]")


class Mended:
    """The SDK's read stream, with what its parser refuses answered as JSON-RPC asks rather than
    dropped (the client would wait for ever): a line that is not JSON gets the -32700 parse
    error, JSON that is not a message -32600; a lone surrogate escape (`\\ud800`, which Node
    writes when it cuts a string mid-emoji) becomes U+FFFD and the message is served."""

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
