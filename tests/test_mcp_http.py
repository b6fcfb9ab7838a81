"""`brain mcp --http`: a real server process on a free port, the SDK's own client over streamable
HTTP, and raw requests for what it must refuse (no token, a wrong one, a foreign Host, another
origin, a body over the bound). Every server is stopped by its pid."""

from __future__ import annotations

import contextlib
import http.client
import json
import os
import re
import shutil
import socket
import stat
import subprocess
import sys
import threading
from collections.abc import Iterator
from dataclasses import dataclass
from pathlib import Path
from typing import Any

import anyio
import pytest
from conftest import ROOT, brain
from test_mcp import as_mcp

from brain.config import usage_log_path
from brain.usage import connect, events

TOOLS = {"find", "recall", "pack", "propose", "locate"}
SECRET = (
    "ghp_" + "abcdefghijklmnopqrstuvwxyz0123456789"
)  # a GitHub token's shape, split for scanners
INIT = {
    "jsonrpc": "2.0",
    "id": 1,
    "method": "initialize",
    "params": {
        "protocolVersion": "2025-06-18",
        "capabilities": {},
        "clientInfo": {"name": "raw", "version": "1"},
    },
}


@dataclass
class Served:
    proc: subprocess.Popen[str]
    url: str
    port: int
    token_file: Path
    said: list[str]  # stderr so far, line by line (a thread keeps reading it)

    @property
    def token(self) -> str:
        return self.token_file.read_text(encoding="ascii").strip()

    @property
    def stderr(self) -> str:
        return "".join(self.said)


def _token_file() -> Path:
    return Path(os.environ["XDG_STATE_HOME"]) / "brain" / "mcp-token"


def _argv(vault: Path, *args: str) -> list[str]:
    return [sys.executable, "-m", "brain", "mcp", "--vault", str(vault), "--http", *args]


@contextlib.contextmanager
def served(vault: Path, *args: str) -> Iterator[Served]:
    """`brain mcp --http --port 0` in its own process until its start lines are out; stopped by
    its pid (SIGTERM, then SIGKILL) when the block ends."""
    proc = subprocess.Popen(
        _argv(vault, "--port", "0", *args),
        stdin=subprocess.DEVNULL,
        stdout=subprocess.PIPE,
        stderr=subprocess.PIPE,
        text=True,
        env={**os.environ, "PYTHONPATH": str(ROOT)},
    )
    said: list[str] = []
    ready = threading.Event()

    def read() -> None:
        assert proc.stderr is not None
        for line in proc.stderr:
            said.append(line)
            if line.startswith("Ctrl-C stops it"):
                ready.set()
        ready.set()

    threading.Thread(target=read, daemon=True).start()
    try:
        assert ready.wait(90), "the server did not start"
        text = "".join(said)
        found = re.search(r"serving brain's tools at (http://\S+/mcp)", text)
        assert found, text
        url = found.group(1)
        port = int(url.rsplit(":", 1)[1].split("/")[0])
        yield Served(proc, url, port, _token_file(), said)
    finally:
        proc.terminate()
        try:
            proc.wait(20)
        except subprocess.TimeoutExpired:
            proc.kill()
            proc.wait(10)


async def _client_calls(
    url: str, token: str, calls: list[tuple[str, dict[str, Any]]]
) -> tuple[set[str], list[Any]]:
    from mcp import ClientSession
    from mcp.client.streamable_http import streamable_http_client
    from mcp.shared._httpx_utils import create_mcp_http_client
    from mcp.types import Implementation

    who = Implementation(name="tester", version="1")
    async with (
        create_mcp_http_client(headers={"Authorization": f"Bearer {token}"}) as http_client,
        streamable_http_client(url, http_client=http_client) as (read, write),
        ClientSession(read, write, client_info=who) as session,
    ):
        await session.initialize()
        names = {t.name for t in (await session.list_tools()).tools}
        return names, [await session.call_tool(name, args) for name, args in calls]


def _post(
    port: int,
    headers: dict[str, str],
    body: bytes | None = None,
    *,
    chunked: bool = False,
) -> tuple[int, str]:
    """One POST to /mcp with exactly these headers (Host included): status and body."""
    conn = http.client.HTTPConnection("127.0.0.1", port, timeout=30)
    try:
        conn.putrequest("POST", "/mcp", skip_host=True, skip_accept_encoding=True)
        base = {"Accept": "application/json, text/event-stream", "Content-Type": "application/json"}
        payload = json.dumps(INIT).encode() if body is None else body
        if chunked:
            base["Transfer-Encoding"] = "chunked"
        else:
            base["Content-Length"] = str(len(payload))
        for key, value in {**base, **headers}.items():
            conn.putheader(key, value)
        conn.endheaders()
        if chunked:
            step = 64 * 1024
            for at in range(0, len(payload), step):
                part = payload[at : at + step]
                conn.send(f"{len(part):x}\r\n".encode() + part + b"\r\n")
            conn.send(b"0\r\n\r\n")
        else:
            conn.send(payload)
        response = conn.getresponse()
        return response.status, response.read(4096).decode("utf-8", "replace")
    finally:
        conn.close()


def test_tools_over_http_answer_as_the_cli_does(
    vault: Path, tmp_path: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    """The official client over streamable HTTP: the same five tools as on stdio, each answering
    with the lines the CLI prints, through the one output step (a credential is masked), logged
    as `mcp:<client>`."""
    calls: list[tuple[str, dict[str, Any]]] = [
        ("find", {"query": "libgit2 hooks"}),
        ("locate", {"handle": "odeme durumu"}),
        ("pack", {"project": "payments"}),
        ("recall", {"query": "paynova webhook"}),
        ("propose", {"line": "mcp over http — brain serves its tools on streamable HTTP"}),
        ("propose", {"line": f"gh token — the token is {SECRET}"}),
    ]
    shutil.copytree(ROOT / "testdata" / "transcripts" / "claude", tmp_path / "claude")
    monkeypatch.setenv("CLAUDE_CONFIG_DIR", str(tmp_path / "claude"))
    assert brain("recall", "--enable", "claude").code == 0
    with served(vault) as server:
        names, results = anyio.run(_client_calls, server.url, server.token, calls)
        stderr = server.stderr
    conn = connect(usage_log_path())
    try:
        callers = {e.caller for e in events(conn)}
    finally:
        conn.close()
    assert callers == {"mcp:tester"}
    assert names == TOOLS
    find, locate, pack, recall, propose, secret = results
    assert not find.is_error, find.content
    assert find.content[0].text == as_mcp(brain("find", "--vault", str(vault), "libgit2 hooks").out)
    assert (
        find.structured_content
        == brain("find", "--vault", str(vault), "--json", "libgit2 hooks").json()
    )
    assert locate.content[0].text == brain(
        "locate", "--vault", str(vault), "odeme durumu"
    ).out.rstrip("\n")
    assert not pack.is_error, pack.content
    assert pack.content[0].text == brain("pack", "--vault", str(vault), "payments").out.rstrip("\n")
    assert recall.content[0].text == brain("recall", "paynova webhook").out.rstrip("\n")
    assert not propose.is_error, propose.content
    assert propose.content[0].text.startswith("Proposed as #")
    assert "mcp over http" in (vault / "AI" / "INBOX.md").read_text(encoding="utf-8")
    assert secret.is_error
    assert "credential" in secret.content[0].text
    assert SECRET not in secret.content[0].text
    assert "Traceback" not in stderr


def test_each_client_is_its_own_session(vault: Path) -> None:
    """One HTTP server serves several agents: each connection is its own session (what the
    usage log keeps and what `once per session` counts), so what one agent was shown is not
    withheld from another; two calls on one connection share theirs."""

    async def two_clients(url: str, token: str) -> tuple[Any, Any]:
        calls = [("find", {"query": "libgit2 hooks"}), ("find", {"query": "libgit2 hooks"})]
        first = await _client_calls(url, token, calls)
        return first, await _client_calls(url, token, calls[:1])

    with served(vault) as server:
        (_, (a1, _)), (_, (b1,)) = anyio.run(two_clients, server.url, server.token)
    conn = connect(usage_log_path())
    try:
        sessions = [e.session for e in events(conn)]
    finally:
        conn.close()
    assert len(sessions) == 3
    assert sessions[0] == sessions[1] != sessions[2]
    assert all(s.startswith("mcp-") for s in sessions)
    assert b1.content[0].text == a1.content[0].text


def test_the_server_refuses_what_it_must_with_the_right_status(vault: Path) -> None:
    """No token, a wrong one, a token in another scheme: 401. A foreign Host (DNS rebinding):
    421. A cross-origin Origin, another port of this machine too: 403. A body over 1 MiB, said
    or streamed: 413. A host named in capitals is the same host. Then the right request still
    passes, and nothing printed a traceback."""
    with served(vault) as server:
        good = {"Host": f"127.0.0.1:{server.port}", "Authorization": f"Bearer {server.token}"}
        host = good["Host"]
        wrong = server.token[:-1] + ("A" if server.token[-1] != "A" else "B")
        statuses = {
            "no token": _post(server.port, {"Host": host}),
            "wrong token": _post(server.port, {**good, "Authorization": f"Bearer {wrong}"}),
            "basic": _post(server.port, {**good, "Authorization": f"Basic {server.token}"}),
            "token prefix": _post(server.port, {**good, "Authorization": "Bearer "}),
            "foreign host": _post(server.port, {**good, "Host": f"evil.example:{server.port}"}),
            "other port": _post(server.port, {**good, "Host": "127.0.0.1:1"}),
            "origin": _post(server.port, {**good, "Origin": "http://evil.example"}),
            "origin port": _post(server.port, {**good, "Origin": "http://127.0.0.1:1"}),
            "body": _post(server.port, good, b"{" + b" " * (1024 * 1024) + b"}"),
            "chunked body": _post(server.port, good, b" " * (2 * 1024 * 1024), chunked=True),
            "same origin": _post(server.port, {**good, "Origin": f"http://{host}"}),
            "localhost": _post(server.port, {**good, "Host": f"localhost:{server.port}"}),
            "LOCALHOST": _post(server.port, {**good, "Host": f"LOCALHOST:{server.port}"}),
            "ORIGIN": _post(server.port, {**good, "Origin": f"HTTP://LOCALHOST:{server.port}"}),
        }
        stderr = server.stderr
    codes = {what: status for what, (status, _) in statuses.items()}
    assert codes == {
        "no token": 401,
        "wrong token": 401,
        "basic": 401,
        "token prefix": 401,
        "foreign host": 421,
        "other port": 421,
        "origin": 403,
        "origin port": 403,
        "body": 413,
        "chunked body": 413,
        "same origin": 200,
        "localhost": 200,
        "LOCALHOST": 200,  # a host name's case means nothing (RFC 9110 4.2.3)
        "ORIGIN": 200,
    }, statuses
    assert "invalid_token" in statuses["no token"][1]
    assert "Traceback" not in stderr
    assert server.token not in stderr


def test_the_token_is_in_a_private_file_and_no_process_argv(vault: Path) -> None:
    """The token file is the user's alone (0600 in a 0700 folder), kept across restarts; the
    token is in no process's command line (/proc/PID/cmdline, every one this user can read, the
    server's included), nor the server's environment, nor what it prints."""
    with served(vault) as server:
        token = server.token
        pid = server.proc.pid
        info = server.token_file.stat()
        folder = server.token_file.parent.stat()
        assert stat.S_IMODE(info.st_mode) == 0o600
        assert stat.S_IMODE(folder.st_mode) == 0o700
        assert info.st_uid == os.getuid()
        assert re.fullmatch(r"[A-Za-z0-9_-]{43}", token)
        proc = Path("/proc")
        if proc.is_dir():
            seen = 0
            for entry in proc.iterdir():
                if not entry.name.isdigit():
                    continue
                with contextlib.suppress(OSError):
                    argv = (entry / "cmdline").read_bytes()
                    seen += 1
                    assert token.encode() not in argv, argv
            assert seen > 1
            assert token.encode() not in (proc / str(pid) / "environ").read_bytes()
            assert b"mcp" in (proc / str(pid) / "cmdline").read_bytes()
        printed = server.stderr
        assert str(server.token_file) in printed
        assert token not in printed
        assert not list(server.token_file.parent.glob(".mcp-token.*"))  # no temp file left
    with served(vault) as again:  # a restart keeps the token: agents stay registered
        assert again.token == token


def test_another_loopback_address_is_served_and_named_in_the_url(vault: Path) -> None:
    """`--host 127.0.0.2` (loopback, so no warning): the URL names that address and a client
    calling it by that name is served."""
    with served(vault, "--host", "127.0.0.2") as server:
        assert server.url == f"http://127.0.0.2:{server.port}/mcp"
        names, (found,) = anyio.run(
            _client_calls, server.url, server.token, [("find", {"query": "libgit2 hooks"})]
        )
        assert "warning" not in server.stderr
    assert names == TOOLS
    assert not found.is_error


def _outbound_address() -> str | None:
    """The address this machine's traffic leaves from, if it has one besides loopback."""
    with socket.socket(socket.AF_INET, socket.SOCK_DGRAM) as s:
        try:
            s.connect(("198.51.100.1", 9))  # a documentation address: nothing is sent
        except OSError:
            return None
        address = str(s.getsockname()[0])
    return None if address.startswith("127.") else address


def test_listening_everywhere_serves_a_client_that_calls_the_machines_address(
    vault: Path,
) -> None:
    """`--host 0.0.0.0` is for clients on the network, and they call the machine by its address
    (http://192.0.2.2:PORT/mcp): their Host header must pass without --allow-host."""
    address = _outbound_address()
    if address is None:
        pytest.skip("this machine has no address but loopback")
    with served(vault, "--host", "0.0.0.0") as server:  # noqa: S104
        url = f"http://{address}:{server.port}/mcp"
        names, (found,) = anyio.run(
            _client_calls, url, server.token, [("find", {"query": "libgit2 hooks"})]
        )
    assert names == TOOLS
    assert not found.is_error


def test_start_lines_name_the_url_and_how_to_register_never_the_token(vault: Path) -> None:
    with served(vault) as server:
        lines = server.stderr
        url, path = server.url, server.token_file
    assert url.startswith("http://127.0.0.1:")
    assert "warning" not in lines
    assert (
        f'claude mcp add --transport http brain {url} --header "Authorization: Bearer '
        f'$(cat {path})"' in lines
    )
    assert f"codex mcp add brain --url {url} --bearer-token-env-var BRAIN_MCP_TOKEN" in lines
    assert f'BRAIN_MCP_TOKEN="$(cat {path})" codex' in lines


def test_http_options_need_http_and_a_port_in_range(vault: Path) -> None:
    for args in (["--port", "9000"], ["--host", "0.0.0.0"], ["--allow-host", "box"]):  # noqa: S104
        run = brain("mcp", "--vault", str(vault), *args)
        assert run.code == 2, run
        assert "--http" in run.err
    run = brain("mcp", "--vault", str(vault), "--http", "--port", "70000")
    assert run.code == 2, run
    assert "not a port" in run.err


def test_a_port_in_use_is_one_line(vault: Path) -> None:
    with socket.socket() as taken:
        taken.bind(("127.0.0.1", 0))
        taken.listen(1)
        port = taken.getsockname()[1]
        run = subprocess.run(
            _argv(vault, "--port", f"{port}"),
            capture_output=True,
            text=True,
            env={**os.environ, "PYTHONPATH": str(ROOT)},
            timeout=90,
            check=False,
        )
    assert run.returncode == 1, run
    assert f"cannot listen on 127.0.0.1:{port}" in run.stderr
    assert "--port" in run.stderr
    assert "Traceback" not in run.stderr


# --- the token file -------------------------------------------------------------------------


def test_a_token_file_others_can_read_or_not_brains_is_refused(vault: Path) -> None:
    """A token file that is group- or world-readable, a link, another user's or not a token is
    refused before anything listens: one line naming the file and the way on, no traceback."""
    path = _token_file()
    path.parent.mkdir(parents=True, mode=0o700)
    target = path.parent / "elsewhere"
    target.write_text("x" * 43 + "\n", encoding="ascii")
    target.chmod(0o600)
    cases = {
        "can be read by others": lambda: (path.write_text("x" * 43), path.chmod(0o640)),
        "symbolic link": lambda: path.symlink_to(target),
        "holds no token": lambda: (path.write_text("not a token\n"), path.chmod(0o600)),
        "not a file": lambda: path.mkdir(mode=0o700),
    }
    for said, make in cases.items():
        make()
        run = brain("mcp", "--vault", str(vault), "--http", "--port", "0")
        assert run.code == 1, (said, run)
        assert said in run.err, run.err
        assert str(path) in run.err
        assert "delete it" in run.err
        assert run.err.count("\n") <= 2, run.err
        assert "Traceback" not in run.err
        if path.is_dir() and not path.is_symlink():
            path.rmdir()
        else:
            path.unlink()


def test_two_servers_starting_at_once_share_one_token() -> None:
    """The file is linked into place whole, never replaced: of makers racing, all read the
    first token, and no temp file is left."""
    from brain.mcp_server import token, token_path

    path = token_path()
    got: list[str] = []
    start = threading.Barrier(8)

    def make() -> None:
        start.wait()
        got.append(token(path))

    threads = [threading.Thread(target=make) for _ in range(8)]
    for t in threads:
        t.start()
    for t in threads:
        t.join()
    assert len(set(got)) == 1
    assert got[0] == path.read_text(encoding="ascii").strip()
    assert stat.S_IMODE(path.stat().st_mode) == 0o600
    assert [p.name for p in path.parent.iterdir()] == ["mcp-token"]


def test_a_token_compares_in_constant_time_and_whole() -> None:
    from brain.mcp_server import Bearer

    bearer = Bearer("a" * 43, "http://127.0.0.1:1")

    async def check(given: str) -> bool:
        return await bearer.verify_token(given) is not None

    assert anyio.run(check, "a" * 43)
    for given in ("a" * 42, "a" * 44, "", "A" * 43, "a" * 42 + "\u00e9"):
        assert not anyio.run(check, given), given


# --- where it listens -------------------------------------------------------------------------


def test_names_a_client_may_use_follow_where_it_listens() -> None:
    from brain.mcp_server import host_names, loopback, url_name

    loop = ("127.0.0.1", "localhost", "[::1]")
    assert host_names("127.0.0.1") == loop
    assert host_names("::1") == loop
    assert host_names("192.0.2.7") == (*loop, "192.0.2.7")
    assert host_names("2001:db8::7") == (*loop, "[2001:db8::7]")
    assert host_names("127.0.0.1", ("Box.Example",)) == (*loop, "box.example")
    assert host_names("127.0.0.2") == (*loop, "127.0.0.2")
    assert [url_name(h, host_names(h)) for h in ("127.0.0.1", "::1", "localhost", "192.0.2.7")] == [
        "127.0.0.1",
        "[::1]",
        "localhost",
        "192.0.2.7",
    ]
    assert url_name("0.0.0.0", host_names("0.0.0.0")) == socket.gethostname().lower()  # noqa: S104
    assert url_name("::", loop) == "127.0.0.1"  # a machine with no name of its own
    everywhere = host_names("0.0.0.0")  # noqa: S104
    assert socket.gethostname().lower() in everywhere
    assert "0.0.0.0" not in everywhere  # noqa: S104
    assert [loopback(h) for h in ("127.0.0.1", "::1", "[::1]", "localhost", "127.3.4.5")] == [
        True
    ] * 5
    assert not any(loopback(h) for h in ("0.0.0.0", "::", "192.0.2.7", "box.example"))  # noqa: S104


def test_a_host_that_is_not_loopback_is_warned_of(vault: Path) -> None:
    from brain.mcp_server import Listening
    from brain.present.setup import mcp_http

    away = Listening("http://box:8417/mcp", Path("/t/mcp-token"), "0.0.0.0", False, ("box",))  # noqa: S104
    here = Listening("http://127.0.0.1:8417/mcp", Path("/t/mcp-token"), "127.0.0.1", True, ())
    assert mcp_http(away).startswith("brain: warning: listening on 0.0.0.0, not loopback")
    assert "warning" not in mcp_http(here)
    assert "$(cat '/t/x y')" in mcp_http(
        Listening("http://127.0.0.1:1/mcp", Path("/t/x y"), "127.0.0.1", True, ())
    )
