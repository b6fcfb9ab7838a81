"""`brain mcp` spoken to line by line: the lines a real client (the SDK's) would never write."""

from __future__ import annotations

import json
import queue
import subprocess
import threading
from pathlib import Path
from typing import Any

from conftest import brain
from test_mcp import TOOLS, _params, as_mcp


class RawServer:
    """`brain mcp` spoken to line by line, for the lines a real client would not write."""

    def __init__(self, vault: Path) -> None:
        params = _params(vault)
        self.proc = subprocess.Popen(
            [params.command, *params.args],
            stdin=subprocess.PIPE,
            stdout=subprocess.PIPE,
            stderr=subprocess.DEVNULL,
            env=params.env,
        )
        self.lines: queue.Queue[bytes] = queue.Queue()
        threading.Thread(target=self._read, daemon=True).start()

    def _read(self) -> None:
        assert self.proc.stdout is not None
        for line in self.proc.stdout:
            self.lines.put(line)

    def send(self, line: str) -> None:
        assert self.proc.stdin is not None
        self.proc.stdin.write(line.encode("utf-8") + b"\n")
        self.proc.stdin.flush()

    def reply(self, seconds: float = 30) -> dict[str, Any]:
        try:
            return dict(json.loads(self.lines.get(timeout=seconds)))
        except queue.Empty:
            raise AssertionError(f"no reply within {seconds} s") from None

    def initialize(self, client: str) -> None:
        hello = {"protocolVersion": "2025-06-18", "capabilities": {}}
        hello["clientInfo"] = {"name": client, "version": "1"}
        self.send(json.dumps({"jsonrpc": "2.0", "id": 1, "method": "initialize", "params": hello}))
        assert self.reply()["id"] == 1
        self.send('{"jsonrpc": "2.0", "method": "notifications/initialized"}')

    def close(self) -> None:
        assert self.proc.stdin is not None
        self.proc.stdin.close()
        try:
            self.proc.wait(timeout=10)
        finally:
            self.proc.kill()


def test_malformed_lines_get_the_protocol_errors_and_the_server_serves_on(vault: Path) -> None:
    server = RawServer(vault)
    try:
        server.send("{oops")  # before initialize, too
        assert server.reply() == {
            "jsonrpc": "2.0",
            "id": None,
            "error": {"code": -32700, "message": "Parse error"},
        }
        server.initialize("raw")
        for line in ("{not json", "[1, 2", '{"jsonrpc": "2.0", "id": 3, "method": "x", NaN}'):
            server.send(line)
            got = server.reply()
            assert (got["id"], got["error"]["code"]) == (None, -32700), line
        server.send('{"jsonrpc": "2.0", "id": 4, "params": {}}')  # JSON, but not a message
        got = server.reply()
        assert (got["id"], got["error"]["code"]) == (4, -32600)
        server.send(json.dumps({"jsonrpc": "2.0", "id": 5, "method": "tools/list"}))
        assert {t["name"] for t in server.reply()["result"]["tools"]} == TOOLS
    finally:
        server.close()


def test_a_lone_surrogate_in_the_arguments_gets_an_answer(vault: Path) -> None:
    """Node writes `\\ud800` when it cuts a string mid-emoji; the SDK's parser refuses it, and the
    client used to wait for ever."""
    server = RawServer(vault)
    try:
        server.initialize("node")
        call = '{"jsonrpc": "2.0", "id": 2, "method": "tools/call", "params": {"name": "find",'
        server.send(call + ' "arguments": {"query": "libgit2 hooks \\ud83d"}}}')
        got = server.reply()
        assert got["id"] == 2
        assert not got["result"]["isError"]
        text = got["result"]["content"][0]["text"]
        assert text == as_mcp(brain("find", "--vault", str(vault), "libgit2 hooks").out)
        server.send(call + ' "arguments": {"query": "pay\\udc00nova \\ud83d\\ude00"}}}')
        assert server.reply()["id"] == 2  # a lone low half, and a whole pair, in one line
    finally:
        server.close()


def test_a_request_whose_id_is_no_string_or_integer_gets_an_error_with_id_null(
    vault: Path,
) -> None:
    """The SDK read `"id": NaN` (or 1.5, null, true) as a notification and answered nothing: the
    client waited for ever. JSON-RPC 2.0 (5, 5.1) answers an invalid request with an error whose
    id is null: -32700 for what is not JSON (NaN, Infinity), -32600 for an id MCP refuses."""
    server = RawServer(vault)
    try:
        server.initialize("raw")
        for rid, code in (
            ("NaN", -32700),
            ("Infinity", -32700),
            ("1.5", -32600),
            ("2.0", -32600),  # written as no integer is
            ("null", -32600),
            ("true", -32600),
            ('{"a": 1}', -32600),
        ):
            server.send(f'{{"jsonrpc": "2.0", "id": {rid}, "method": "tools/list"}}')
            got = server.reply()
            assert (got["id"], got["error"]["code"]) == (None, code), rid
        server.send('{"jsonrpc": "2.0", "id": 2, "method": "ping"}')
        assert server.reply() == {"jsonrpc": "2.0", "id": 2, "result": {}}
        server.send(json.dumps({"jsonrpc": "2.0", "id": "x", "method": "tools/list"}))
        assert {t["name"] for t in server.reply()["result"]["tools"]} == TOOLS
    finally:
        server.close()


def test_initialize_names_brains_version_and_the_one_capability_it_serves(vault: Path) -> None:
    """serverInfo.version is what `brain version` says (the package's 0.1.0 never changes), and
    the capabilities are the tools alone: the SDK advertised prompts and resources it never had,
    and a client that lists them gets "method not found" (JSON-RPC -32601), not an empty list."""
    server = RawServer(vault)
    try:
        hello = {"protocolVersion": "2025-06-18", "capabilities": {}}
        hello["clientInfo"] = {"name": "raw", "version": "1"}
        call = {"jsonrpc": "2.0", "id": 1, "method": "initialize", "params": hello}
        server.send(json.dumps(call))
        result = server.reply()["result"]
        server.send('{"jsonrpc": "2.0", "method": "notifications/initialized"}')
        said = brain("version", "--json").json()
        version = f"{said['version']} ({said['commit']})" if said["commit"] else said["version"]
        assert result["serverInfo"] == {"name": "brain", "version": version}
        assert list(result["capabilities"]) == ["tools"]
        for n, method in enumerate(("prompts/list", "resources/list", "resources/templates/list")):
            server.send(json.dumps({"jsonrpc": "2.0", "id": 10 + n, "method": method}))
            got = server.reply()
            assert got["error"]["code"] == -32601, (method, got)
        server.send(json.dumps({"jsonrpc": "2.0", "id": 20, "method": "tools/list"}))
        assert {t["name"] for t in server.reply()["result"]["tools"]} == TOOLS
    finally:
        server.close()
