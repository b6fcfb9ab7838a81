"""The warm worker through the real path: a real `brain find` in a fresh process, the real worker
process (the ONNX model, or an Ollama-shaped server on loopback where a test must hold the worker
mid-embedding), its folder, its token, its deadline and how it starts and fails to start."""

from __future__ import annotations

import json
import os
import shutil
import signal
import socket
import stat
import subprocess
import sys
import threading
import time
from collections.abc import Iterator
from http.server import ThreadingHTTPServer
from pathlib import Path

import pytest
from conftest import ROOT, Run, brain
from test_hybrid import _Embeddings, embedded_state, hvault  # noqa: F401 (fixtures)

from brain import config, index, worker, worker_client
from brain.wire import worker_name

ONNX = {"BRAIN_EMBED": "onnx", "BRAIN_WORKER": "1", "BRAIN_WORKER_IDLE": "120"}
QUERY = "people paid double when the card processor was sluggish"


@pytest.fixture
def wvault(request: pytest.FixtureRequest, monkeypatch: pytest.MonkeyPatch) -> Iterator[Path]:
    """test_hybrid's embedded vault, for the real model; no worker outlives a test."""
    vault: Path = request.getfixturevalue("hvault")
    monkeypatch.setenv("BRAIN_EMBED", "onnx")  # so that worker_client.base_of names the same worker
    base = worker_client.base_of(vault)
    for suffix in (".failed", ".log"):
        (base.parent / (base.name + suffix)).unlink(missing_ok=True)
    yield vault
    stop_workers(base)


def ask_note(vault: Path) -> str:
    return worker_client.ask(vault, QUERY, 5).note


def stop_workers(base: Path) -> None:
    """Kill the worker of `base` by the pid it recorded, and wait for any that is starting; and
    first, by pid, one a command spawned a moment ago that has not taken its lock or written its
    record yet (a replacement for a hung one), which would otherwise outlive the test."""
    for pid in _spawned(base):
        _kill(pid)
    deadline = time.monotonic() + 60
    while time.monotonic() < deadline:
        record = worker_client.read_record(base)
        if record is not None:
            _kill(record["pid"])
            (base.parent / (base.name + ".json")).unlink(missing_ok=True)
        lock = worker_client.take_lock(base)
        if lock is not None:  # no worker process left
            lock.close()
            return
        time.sleep(0.1)


def _spawned(base: Path) -> list[int]:
    """The pids of this user's `python -m brain.worker VAULT` processes whose files are `base`
    (brain.wire.worker_name of VAULT), by their command lines (Linux; elsewhere none)."""
    found = []
    for cmdline in Path("/proc").glob("[0-9]*/cmdline"):
        try:
            args = cmdline.read_bytes().decode("utf-8", "replace").split("\0")[:-1]
        except OSError:  # gone meanwhile, or not ours to read
            continue
        if args[-3:-1] == ["-m", "brain.worker"] and worker_name(args[-1]) == base.name:
            found.append(int(cmdline.parent.name))
    return found


def _kill(pid: int) -> None:
    for sig in (signal.SIGCONT, signal.SIGKILL):
        try:
            os.kill(pid, sig)
        except ProcessLookupError:
            return
    deadline = time.monotonic() + 10
    while _alive(pid) and time.monotonic() < deadline:
        time.sleep(0.05)


def _alive(pid: int) -> bool:
    try:
        state = Path(f"/proc/{pid}/stat").read_text().rsplit(")", 1)[1].split()[0]
    except FileNotFoundError:
        return False
    except OSError:
        try:
            os.kill(pid, 0)
        except ProcessLookupError:
            return False
        return True
    return state not in ("Z", "X")  # a zombie waits for a parent that is not ours to reap it


def wait_for(what: str, check: object, seconds: float = 60) -> object:
    deadline = time.monotonic() + seconds
    while time.monotonic() < deadline:
        found = check()  # type: ignore[operator]
        if found:
            return found
        time.sleep(0.2)
    raise AssertionError(f"timed out waiting for {what}")


def answered(vault: Path, monkeypatch: pytest.MonkeyPatch) -> list[tuple[int, float]] | None:
    """The running worker's neighbours for QUERY, or None; this never starts a worker itself."""
    monkeypatch.setattr(worker_client, "spawn", lambda *a, **k: False)
    return worker_client.ask(vault, QUERY, 5).hits


def timed_find(vault: Path, *args: str, cwd: Path | None = None, **env: str) -> tuple[float, Run]:
    start = time.monotonic()
    run = brain("find", "--vault", str(vault), *args, env={**ONNX, **env}, cwd=cwd)
    return time.monotonic() - start, run


def start_worker(vault: Path, monkeypatch: pytest.MonkeyPatch) -> int:
    """A worker started as a find starts it, once it answers: its pid."""
    run = brain("find", "--vault", str(vault), "k8s upgrade", env=ONNX)
    assert run.code == 0, run.err
    wait_for("the worker to answer", lambda: answered(vault, monkeypatch))
    record = worker_client.read_record(worker_client.base_of(vault))
    assert record is not None
    return int(record["pid"])


# --- item 3: the worker's folder and its token ---------------------------------------------------


def _foreign(folder: Path, monkeypatch: pytest.MonkeyPatch) -> None:
    """Make `folder` another user's: for real when root (chown to nobody), else as the worker
    sees it (a uid that is not the folder's)."""
    if os.geteuid() == 0:
        os.chown(folder, 65534, 65534)
    else:
        uid = os.getuid()
        monkeypatch.setattr(os, "getuid", lambda: uid + 1)


@pytest.fixture
def short_tmp() -> Iterator[Path]:
    """A folder with a path short enough for a Unix socket (pytest's are often too long)."""
    import tempfile

    folder = Path(tempfile.mkdtemp(prefix="brain-test-"))
    yield folder
    shutil.rmtree(folder, ignore_errors=True)


def test_a_worker_folder_of_another_user_is_refused(
    vault: Path, short_tmp: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    runtime = short_tmp / "runtime"
    folder = runtime / "brain"
    folder.mkdir(parents=True, mode=0o700)
    folder.chmod(0o700)
    monkeypatch.setenv("XDG_RUNTIME_DIR", str(runtime))
    monkeypatch.setenv("BRAIN_EMBED", "onnx")
    spawned: list[Path] = []
    monkeypatch.setattr(worker_client, "spawn", lambda v, b=None: spawned.append(v) or True)
    assert worker_client.run_dir() == folder
    assert worker_client.check_dir(folder) == ""
    _foreign(folder, monkeypatch)
    assert "belongs to another user" in worker_client.check_dir(folder)
    answer = worker_client.ask(vault, "libgit2", 5)
    assert answer.hits is None
    assert answer.inline  # the find answers without the worker, from this process
    assert "belongs to another user" in answer.note
    assert "\n" not in answer.note
    assert spawned == []
    assert list(folder.iterdir()) == []  # no socket, no record, no log: nothing of ours in it


@pytest.mark.parametrize("owner", ["me, mode 755", "another user"])
def test_a_find_refuses_a_shared_tmp_folder_and_still_answers(
    owner: str, vault: Path, tmp_path: Path
) -> None:
    """The state path is too long for a socket, so the worker would live in $TMPDIR/brain-<uid>;
    a folder there that others can enter or that someone else owns is refused, in one line."""
    if owner == "another user" and os.geteuid() != 0:
        pytest.skip("chown to another user needs root (the in-process test covers it)")
    state = tmp_path / ("s" * 120)
    tmp = tmp_path / "tmp"
    folder = tmp / f"brain-{os.getuid()}"
    folder.mkdir(parents=True)
    folder.chmod(0o755)
    if owner == "another user":
        os.chown(folder, 65534, 65534)
    env = {"XDG_STATE_HOME": str(state), "TMPDIR": str(tmp), **ONNX}
    run = brain("find", "--vault", str(vault), "libgit2 hooks", env=env)
    assert run.code == 0, run.err
    assert run.out.startswith("AI/LEARNINGS.md:7 libgit2")  # keyword answers still work
    about = [line for line in run.err.splitlines() if str(folder) in line]
    assert len(about) == 1, run.err
    assert about[0].startswith(f"brain: no background worker: {folder} ")
    assert "Traceback" not in run.err
    assert list(folder.iterdir()) == []
    st = folder.stat()
    assert stat.S_IMODE(st.st_mode) == 0o755  # left as found, not "fixed" and used


@pytest.mark.slow
def test_a_request_without_the_right_token_gets_no_answer(
    wvault: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    start_worker(wvault, monkeypatch)
    base = worker_client.base_of(wvault)
    assert stat.S_IMODE(base.parent.stat().st_mode) == 0o700
    record_file = base.parent / (base.name + ".json")
    assert stat.S_IMODE(record_file.stat().st_mode) == 0o600
    token = json.loads(record_file.read_text())["token"]
    request = {"protocol": 1, "op": "neighbours", "vault": str(wvault), "text": QUERY, "k": 3}
    for wrong in ({}, {"token": ""}, {"token": "0" * len(token)}, {"token": token + "x"}):
        got = _exchange(base, {**request, **wrong})
        assert got == b"", (wrong, got)
    lines = _exchange(base, {**request, "token": token}).splitlines()
    assert json.loads(lines[0]) == {"ack": 1}
    assert len(json.loads(lines[1])["hits"]) == 3


def _exchange(base: Path, doc: dict[str, object], raw: bytes | None = None) -> bytes:
    """Send one request on the worker's socket; everything it says before it hangs up."""
    with socket.socket(socket.AF_UNIX, socket.SOCK_STREAM) as sock:
        sock.settimeout(10)
        sock.connect(str(base.parent / (base.name + ".sock")))
        sock.sendall(raw if raw is not None else json.dumps(doc).encode() + b"\n")
        got = b""
        while chunk := sock.recv(65536):
            got += chunk
        return got


@pytest.mark.slow
def test_a_request_with_no_end_is_cut_off(wvault: Path, monkeypatch: pytest.MonkeyPatch) -> None:
    start_worker(wvault, monkeypatch)
    base = worker_client.base_of(wvault)
    sock_path = str(base.parent / (base.name + ".sock"))
    # Too long: the worker stops reading at REQUEST_MAX and hangs up.
    with socket.socket(socket.AF_UNIX, socket.SOCK_STREAM) as sock:
        sock.settimeout(10)
        sock.connect(sock_path)
        sent, cut = 0, False
        try:
            while sent < 16 * worker.REQUEST_MAX:
                sock.sendall(b"x" * 65536)
                sent += 65536
            cut = sock.recv(1) == b""
        except (BrokenPipeError, ConnectionResetError):
            cut = True
        assert cut, f"the worker took {sent} bytes without a newline"
    # Too slow: a request that never ends is dropped after READ_SECONDS.
    with socket.socket(socket.AF_UNIX, socket.SOCK_STREAM) as sock:
        sock.settimeout(10)
        sock.connect(sock_path)
        sock.sendall(b'{"token": "')
        start = time.monotonic()
        assert sock.recv(1) == b""
        assert time.monotonic() - start < worker.READ_SECONDS + 2
    assert answered(wvault, monkeypatch)  # and it serves on


# --- item 9: a stopped worker, a busy worker -----------------------------------------------------


@pytest.mark.slow
def test_a_stopped_worker_is_replaced_and_find_answers_from_keywords_at_once(
    wvault: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    pid = start_worker(wvault, monkeypatch)
    os.kill(pid, signal.SIGSTOP)
    try:
        took, run = timed_find(wvault, "--json", "libgit2 hooks")
    finally:
        os.kill(pid, signal.SIGCONT)
    assert run.code == 0, run.err
    hits = json.loads(run.out)["hits"]
    assert hits[0]["handle"] == "libgit2"
    assert all("semantic" not in hit["match"] for hit in hits)  # keywords, not a model load
    assert run.err == (
        "brain: keyword results for now: the background worker did not answer within 0.3 s;"
        " started a new one\n"
    )
    assert took < 3.0  # measured ~1 s on 2 busy cores; 6-7 s before
    wait_for("the stopped worker to be killed", lambda: not _alive(pid), 10)
    wait_for("a new worker", lambda: answered(wvault, monkeypatch))
    record = worker_client.read_record(worker_client.base_of(wvault))
    assert record is not None
    assert record["pid"] != pid


@pytest.fixture
def slow_ollama(monkeypatch: pytest.MonkeyPatch) -> Iterator[threading.Event]:
    """An Ollama-shaped embedding server that holds every request until the event is set, so
    that a worker stays mid-embedding for as long as a test needs; brain.yaml points at it."""
    gate = threading.Event()

    class Held(_Embeddings):
        def do_POST(self) -> None:
            gate.wait(20)
            super().do_POST()

    server = ThreadingHTTPServer(("127.0.0.1", 0), Held)
    threading.Thread(target=server.serve_forever, daemon=True).start()
    cfg = config.config_dir()
    cfg.mkdir(parents=True, exist_ok=True)
    url = f"http://127.0.0.1:{server.server_address[1]}"
    (cfg / "brain.yaml").write_text(
        f"embed:\n  provider: ollama\n  model: fake\n  url: {url}\n  timeout: 60\n",
        encoding="utf-8",
    )
    monkeypatch.setenv("BRAIN_EMBED", "")
    yield gate
    gate.set()
    server.shutdown()
    server.server_close()


def test_finds_answer_at_once_while_the_vault_is_first_embedded(
    vault: Path, slow_ollama: threading.Event, monkeypatch: pytest.MonkeyPatch
) -> None:
    env = {"BRAIN_EMBED": "", "BRAIN_WORKER": "1", "BRAIN_WORKER_IDLE": "120"}
    base = worker_client.base_of(vault)
    monkeypatch.setattr(worker_client, "spawn", lambda *a, **k: False)  # only the finds start it
    try:
        index.sync(vault)  # a keyword index: not one unit embedded yet
        took, first = timed_find(vault, "libgit2 hooks", **env)
        assert first.code == 0, first.err
        assert first.out.startswith("AI/LEARNINGS.md:7 libgit2")
        assert first.err == (
            "brain: keyword results for now: the vault is being embedded in the background\n"
        )
        wait_for("the worker to embed", lambda: "embedded" in ask_note(vault))
        for _ in range(2):
            took, run = timed_find(vault, "--json", "libgit2 hooks", **env)
            assert run.code == 0, run.err
            assert json.loads(run.out)["hits"][0]["handle"] == "libgit2"
            assert run.err.startswith(
                "brain: keyword results for now: the vault is being embedded in the background"
            ), run.err
            assert took < 3.0  # measured ~0.8 s on 2 busy cores; 7-9 s before
        slow_ollama.set()  # the vector half, once it is there
        wait_for("the vectors", lambda: answered(vault, monkeypatch))
        took, done = timed_find(vault, "--json", "libgit2 hooks", **env)
        assert done.err == ""  # hybrid, from the worker
        assert json.loads(done.out)["hits"][0]["handle"] == "libgit2"
    finally:
        slow_ollama.set()
        stop_workers(base)


def test_a_worker_stopped_mid_embedding_cleans_up_and_is_no_failure(
    vault: Path, slow_ollama: threading.Event, monkeypatch: pytest.MonkeyPatch
) -> None:
    env = {"BRAIN_EMBED": "", "BRAIN_WORKER": "1", "BRAIN_WORKER_IDLE": "120"}
    base = worker_client.base_of(vault)
    monkeypatch.setattr(worker_client, "spawn", lambda *a, **k: False)
    try:
        index.sync(vault)
        assert brain("find", "--vault", str(vault), "libgit2", env=env).code == 0
        wait_for("the worker to embed", lambda: "embedded" in ask_note(vault))
        record = worker_client.read_record(base)
        assert record is not None
        os.kill(record["pid"], signal.SIGTERM)
        wait_for("the worker to exit", lambda: not _alive(record["pid"]), 10)
        left = [p.name for p in base.parent.iterdir() if p.name.startswith(base.name)]
        assert sorted(left) == [base.name + ".lock"]
        run = brain("find", "--vault", str(vault), "libgit2", env=env)
        # no failure is reported: a worker stopped on purpose is not one that failed
        assert run.code == 0, run
        assert "failed" not in run.err, run
    finally:
        slow_ollama.set()
        stop_workers(base)


# --- item 6: how helpers start, and a start that fails ---------------------------------------


def _console_script() -> list[str]:
    """`brain` as a user runs it: the installed console script (whose folder, not the current
    one, is on its import path), else the interpreter with -P."""
    script = Path(sys.executable).parent / "brain"
    return [str(script)] if script.exists() else [sys.executable, "-P", "-m", "brain"]


@pytest.mark.slow
def test_the_worker_starts_from_a_folder_holding_a_folder_named_brain(
    wvault: Path, tmp_path: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    clone = tmp_path / "clone"
    (clone / "brain").mkdir(parents=True)
    (clone / "brain" / "__init__.py").write_text("raise ImportError('not this brain')\n")
    base = worker_client.base_of(wvault)
    proc = subprocess.run(
        [*_console_script(), "find", "--vault", str(wvault), "k8s upgrade"],
        capture_output=True,
        text=True,
        cwd=clone,
        env={**os.environ, **ONNX},
        timeout=120,
        check=False,
    )
    assert proc.returncode == 0, proc.stderr
    sock = base.parent / (base.name + ".sock")
    wait_for("the worker's socket", sock.exists, 60)
    assert wait_for("the worker to answer", lambda: answered(wvault, monkeypatch))


def test_every_helper_process_starts_with_the_current_folder_off_the_path() -> None:
    """No `[sys.executable, ...]` command line in brain/ but config.python_command's, which
    passes -P (a new spawn site that forgets it fails here)."""
    assert config.python_command("brain.worker", "x")[1:] == ["-P", "-m", "brain.worker", "x"]
    import ast

    offenders = []
    for path in (ROOT / "brain").rglob("*.py"):
        for node in ast.walk(ast.parse(path.read_text(encoding="utf-8"))):
            if not isinstance(node, ast.List):
                continue
            words = [ast.unparse(e) for e in node.elts[:2]]
            if words[:1] == ["sys.executable"] and words[1:] != ["'-P'"]:
                offenders.append(f"{path.relative_to(ROOT)}:{node.lineno}")
    assert offenders == []


@pytest.mark.slow
def test_a_worker_that_cannot_start_says_why_once(
    wvault: Path, tmp_path: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    # The worker's interpreter dies at start (as it did when a folder named brain shadowed it).
    site = tmp_path / "site"
    site.mkdir()
    (site / "sitecustomize.py").write_text(
        "import os, sys\n"
        "if 'brain.worker' in sys.orig_argv:\n"
        "    sys.stderr.write('ImportError: simulated start failure\\n')\n"
        "    os._exit(1)\n"
    )
    env = {**ONNX, "PYTHONPATH": os.pathsep.join([str(site), str(ROOT)])}
    base = worker_client.base_of(wvault)
    log = base.parent / (base.name + ".log")
    # the vault is shared by the module's tests: one that ran before on this xdist worker may have
    # left its worker running, which would answer instead of a new one failing to start
    if base.parent.is_dir():
        stop_workers(base)
        log.unlink(missing_ok=True)
    first = brain("find", "--vault", str(wvault), "k8s upgrade", env=env)
    assert first.code == 0
    assert first.err == ""  # answered in this process, as with no worker
    wait_for("the worker to fail", lambda: log.exists() and log.read_text().strip(), 60)
    second = brain("find", "--vault", str(wvault), "k8s upgrade", env=env)
    assert second.code == 0
    assert second.out == first.out
    assert second.err == (
        "brain: the background worker failed: ImportError: simulated start failure"
        " (next try in 10 minutes)\n"
    )
    third = brain("find", "--vault", str(wvault), "k8s upgrade", env=env)
    assert third.err == ""  # said once
    assert not log.exists()  # and not started again during the back-off


@pytest.mark.parametrize("size", [0, 1_000, 3 * 1024 * 1024])
def test_a_commands_stdin_reads_whole_and_a_hooks_event_needs_no_thread(size: int) -> None:
    """The client's stdin reaches the command whole through a real pipe (select and os.read work
    on it); an event that fits in the pipe is written at once, with no feeding thread started."""
    import select

    from brain.stdin import PRIME_STDIN_MAX, read_stdin
    from brain.worker import _Stdin

    data = bytes(i % 251 for i in range(size))
    before = threading.active_count()
    stdin = _Stdin(lambda: data, False, "utf-8")
    try:
        fd = stdin.fileno()
        if size <= 1_000:
            assert threading.active_count() == before
        assert select.select([fd], [], [], 5)[0] == [fd]
        assert read_stdin(fd, PRIME_STDIN_MAX, 5.0) == (data, True)
    finally:
        stdin.close()


def test_stdin_the_client_read_for_a_worker_is_read_again_by_its_own_run() -> None:
    """Prime's event, read by the thin client to go with its request, is what the process's own
    run reads when the worker does not run the command (busy, declined, hung): stdin is drained."""
    code = (
        "import os, sys\n"
        "from brain.stdin import keep, read_stdin\n"
        "data = read_stdin(0, 1 << 20, 5.0)[0]\n"
        "keep(data)\n"
        "again = read_stdin(0, 1 << 20, 5.0)\n"
        "os.write(1, repr((data, again)).encode())\n"
    )
    proc = subprocess.run(
        [sys.executable, "-c", code], input=b'{"prompt": "x"}', capture_output=True, check=False
    )
    assert proc.stdout == repr((b'{"prompt": "x"}', (b'{"prompt": "x"}', True))).encode()
