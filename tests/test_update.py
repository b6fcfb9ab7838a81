"""`brain update` and the update notice, on the real path: a release server on 127.0.0.1 serving
real wheels built by tools/build_release.py and signed with a throwaway key, and a real brain
installed in a venv made here.

The throwaway key is trusted the only way any key is: compiled into the wheels under test
(`build_release.py --public-key`). Nothing at run time (no variable, no file) adds a key, so a
test never weakens what a user's brain accepts; in-process tests monkeypatch
`brain.release.PUBLIC_KEYS` instead. The installed venv reuses this environment's dependencies
through a `.pth` file (a folder of links to them, brain itself left out), so pip never needs the
network.
"""

from __future__ import annotations

import base64
import json
import os
import subprocess
import sys
import sysconfig
import threading
import time
from collections.abc import Iterator
from dataclasses import dataclass, field
from http.server import BaseHTTPRequestHandler, ThreadingHTTPServer
from pathlib import Path

import pytest
from conftest import ROOT

from brain import notice, release
from brain.commands import update as upd
from brain.errors import BrainError

OLD, NEW = "dev-2026-01", "dev-2026-02"


# --- keys, releases, a server ---------------------------------------------------------------------


@dataclass(frozen=True)
class Key:
    pem: bytes
    public: str

    def sign(self, data: bytes) -> bytes:
        from cryptography.hazmat.primitives.asymmetric.ed25519 import Ed25519PrivateKey
        from cryptography.hazmat.primitives.serialization import load_pem_private_key

        key = load_pem_private_key(self.pem, password=None)
        assert isinstance(key, Ed25519PrivateKey)
        return key.sign(data)


def make_key() -> Key:
    from cryptography.hazmat.primitives import serialization as ser
    from cryptography.hazmat.primitives.asymmetric.ed25519 import Ed25519PrivateKey

    key = Ed25519PrivateKey.generate()
    pem = key.private_bytes(ser.Encoding.PEM, ser.PrivateFormat.PKCS8, ser.NoEncryption())
    raw = key.public_key().public_bytes(ser.Encoding.Raw, ser.PublicFormat.Raw)
    return Key(pem, base64.b64encode(raw).decode())


@pytest.fixture(scope="session")
def test_key() -> Key:
    return make_key()


@dataclass(frozen=True)
class Release:
    tag: str
    folder: Path
    wheel: str

    def assets(self) -> dict[str, bytes]:
        return {p.name: p.read_bytes() for p in self.folder.iterdir()}


@pytest.fixture(scope="session")
def releases(tmp_path_factory: pytest.TempPathFactory, test_key: Key) -> dict[str, Release]:
    """Two real releases of this checkout, built once per session (in parallel)."""
    root = tmp_path_factory.mktemp("releases")
    keyfile = root / "key.pem"
    keyfile.write_bytes(test_key.pem)
    procs = {}
    for tag in (OLD, NEW):
        procs[tag] = subprocess.Popen(
            [
                *(sys.executable, str(ROOT / "tools" / "build_release.py"), "build"),
                *("--tag", tag, "--out", str(root / tag), "--key-file", str(keyfile)),
                *("--public-key", test_key.public, "--commit", f"c0ffee{tag[-1]}"),
            ],
            stdout=subprocess.PIPE,
            stderr=subprocess.PIPE,
            text=True,
        )
    out = {}
    for tag, proc in procs.items():
        _, stderr = proc.communicate(timeout=300)
        assert proc.returncode == 0, stderr
        meta = json.loads((root / tag / release.META).read_text())
        out[tag] = Release(tag, root / tag, meta["wheel"])
    return out


@dataclass
class Server:
    url: str
    routes: dict[str, bytes] = field(default_factory=dict)
    hang: set[str] = field(default_factory=set)  # paths that never answer
    truncate: set[str] = field(default_factory=set)  # paths cut off half-way
    hits: list[str] = field(default_factory=list)
    stop: threading.Event = field(default_factory=threading.Event)

    def publish(self, rel: Release, *, latest: bool = True, **replace: bytes) -> None:
        """Serve `rel` (as the latest release too); `replace` swaps assets by name."""
        assets = {**rel.assets(), **{k.replace("__", "."): v for k, v in replace.items()}}
        for name, data in assets.items():
            self.routes[f"/releases/download/{rel.tag}/{name}"] = data
            if latest:
                self.routes[f"/releases/latest/download/{name}"] = data

    def reset(self) -> None:
        self.routes.clear()
        self.hang.clear()
        self.truncate.clear()
        self.hits.clear()


@pytest.fixture(scope="session")
def server() -> Iterator[Server]:
    state = Server("")

    class Handler(BaseHTTPRequestHandler):
        def do_GET(self) -> None:
            state.hits.append(self.path)
            if self.path in state.hang:
                state.stop.wait(10)
                return
            data = state.routes.get(self.path)
            if data is None:
                self.send_error(404)
                return
            self.send_response(200)
            self.send_header("Content-Length", str(len(data)))
            self.end_headers()
            if self.path in state.truncate:
                self.wfile.write(data[: len(data) // 2])
                self.wfile.flush()
                self.close_connection = True
                return
            self.wfile.write(data)

        def log_message(self, *args: object) -> None:
            pass

    httpd = ThreadingHTTPServer(("127.0.0.1", 0), Handler)
    httpd.daemon_threads = True
    state.url = f"http://127.0.0.1:{httpd.server_address[1]}/releases"
    thread = threading.Thread(target=httpd.serve_forever, daemon=True)
    thread.start()
    yield state
    state.stop.set()
    httpd.shutdown()
    httpd.server_close()


@pytest.fixture
def srv(server: Server) -> Iterator[Server]:
    server.reset()
    yield server
    server.reset()


# --- an installed brain -------------------------------------------------------------------------


@pytest.fixture(scope="session")
def deps_farm(tmp_path_factory: pytest.TempPathFactory) -> Path:
    """A folder of links to this environment's packages, brain itself left out."""
    farm = tmp_path_factory.mktemp("deps")
    site = Path(sysconfig.get_paths()["purelib"])
    for entry in site.iterdir():
        name = entry.name.lower()
        if name.startswith(("brain", "__editable__", "_brain")) or name.endswith(".pth"):
            continue
        (farm / entry.name).symlink_to(entry)
    return farm


@dataclass(frozen=True)
class Installed:
    prefix: Path

    @property
    def bin(self) -> Path:
        return self.prefix / ("Scripts" if os.name == "nt" else "bin")

    def brain(
        self, *args: str, env: dict[str, str] | None = None
    ) -> subprocess.CompletedProcess[str]:
        return subprocess.run(
            [str(self.bin / "brain"), *args],
            capture_output=True,
            text=True,
            env={**os.environ, "PIP_NO_INDEX": "1", **(env or {})},
            timeout=120,
            check=False,
        )

    def tag(self) -> str:
        proc = self.brain("version", "--json")
        assert proc.returncode == 0, proc.stderr
        return str(json.loads(proc.stdout)["version"])

    def marker(self) -> dict[str, object]:
        doc = json.loads((self.prefix / upd.MARKER).read_text())
        assert isinstance(doc, dict)
        return doc


def install_release(prefix: Path, rel: Release, farm: Path, *, marker: bool = True) -> Installed:
    """What install.sh does, minus the download: a venv, the wheel, the kept wheel, the marker."""
    subprocess.run([sys.executable, "-m", "venv", "--without-pip", str(prefix)], check=True)
    py = prefix / "bin" / "python"
    purelib = subprocess.run(
        [str(py), "-c", "import sysconfig; print(sysconfig.get_paths()['purelib'])"],
        capture_output=True,
        text=True,
        check=True,
    ).stdout.strip()
    Path(purelib, "brain-test-deps.pth").write_text(f"{farm}\n")
    wheel = rel.folder / rel.wheel
    subprocess.run(
        [str(py), "-m", "pip", "install", "-q", "--no-deps", "--disable-pip-version-check", wheel],
        check=True,
    )
    if marker:
        kept = prefix / upd.RELEASES / rel.wheel
        kept.parent.mkdir()
        kept.write_bytes(wheel.read_bytes())
        current = {"tag": rel.tag, "wheel": str(kept), "sha256": release.sha256(wheel.read_bytes())}
        doc = {"installer": "test", "method": "venv", "current": current, "previous": None}
        (prefix / upd.MARKER).write_text(json.dumps(doc))
    return Installed(prefix)


@pytest.fixture(scope="module")
def installed(
    tmp_path_factory: pytest.TempPathFactory, releases: dict[str, Release], deps_farm: Path
) -> Installed:
    """A brain OLD shared by the tests that must leave it untouched."""
    return install_release(tmp_path_factory.mktemp("env") / "venv", releases[OLD], deps_farm)


def update_env(srv: Server, **extra: str) -> dict[str, str]:
    return {"BRAIN_RELEASE_URL": srv.url, "BRAIN_UPDATE_TIMEOUT": "2", **extra}


def assert_untouched(inst: Installed, before: dict[str, object]) -> None:
    assert inst.tag() == OLD
    assert inst.marker() == before
    assert inst.brain("find", "--help").returncode == 0


# --- the real path ------------------------------------------------------------------------------


@pytest.mark.slow
def test_update_installs_the_new_release_and_rollback_restores(
    tmp_path: Path, srv: Server, releases: dict[str, Release], deps_farm: Path
) -> None:
    inst = install_release(tmp_path / "venv", releases[OLD], deps_farm)
    srv.publish(releases[OLD], latest=False)
    srv.publish(releases[NEW])

    check = inst.brain("update", "--check", env=update_env(srv))
    assert check.returncode == 0, check.stderr
    assert f"brain {NEW} is available" in check.stdout
    assert inst.tag() == OLD

    run = inst.brain("update", env=update_env(srv))
    assert run.returncode == 0, run.stderr
    assert f"Updated: brain {OLD} -> {NEW}" in run.stdout
    assert "Traceback" not in run.stderr
    assert inst.tag() == NEW
    marker = inst.marker()
    assert isinstance(marker["current"], dict)
    assert isinstance(marker["previous"], dict)
    assert marker["current"]["tag"] == NEW
    assert marker["previous"]["tag"] == OLD
    assert (inst.prefix / upd.RELEASES / releases[NEW].wheel).is_file()

    again = inst.brain("update", "--json", env=update_env(srv))
    assert again.returncode == 0, again.stderr
    doc = json.loads(again.stdout)
    assert list(doc) == ["action", "previous", "current", "wheel", "check", "check_ok"]
    assert doc["action"] == "current"
    assert (doc["wheel"], doc["check"], doc["check_ok"]) == (None, None, None)  # none is null

    back = inst.brain("update", "--rollback", env=update_env(srv))
    assert back.returncode == 0, back.stderr
    assert f"Rolled back: brain {NEW} -> {OLD}" in back.stdout
    assert inst.tag() == OLD
    assert inst.brain("find", "--help").returncode == 0


def _refused(inst: Installed, srv: Server, says: str, **env: str) -> None:
    before = inst.marker()
    run = inst.brain("update", env=update_env(srv, **env))
    assert run.returncode == 1, (run.stdout, run.stderr)
    assert run.stderr.startswith("brain: "), run.stderr
    assert run.stderr.count("\n") == 1, run.stderr
    assert says in run.stderr
    assert "Traceback" not in run.stderr
    assert_untouched(inst, before)


@pytest.mark.slow
def test_tampered_wheel_is_refused(
    installed: Installed, srv: Server, releases: dict[str, Release]
) -> None:
    new = releases[NEW]
    bad = bytearray((new.folder / new.wheel).read_bytes())
    bad[len(bad) // 2] ^= 0xFF
    srv.publish(new, **{new.wheel.replace(".", "__"): bytes(bad)})
    _refused(installed, srv, "does not match its sha256")


@pytest.mark.slow
def test_tampered_checksum_file_is_refused(
    installed: Installed, srv: Server, releases: dict[str, Release]
) -> None:
    new = releases[NEW]
    sums = (new.folder / release.SUMS).read_text()
    forged = sums.replace(sums[:64], "0" * 64, 1).encode()
    srv.publish(new, sha256sums__txt=forged)
    _refused(installed, srv, "not made by any key this brain trusts")


@pytest.mark.slow
def test_signature_from_an_unknown_key_is_refused(
    installed: Installed, srv: Server, releases: dict[str, Release]
) -> None:
    new = releases[NEW]
    evil = make_key()
    wheel = bytearray((new.folder / new.wheel).read_bytes())
    wheel[-100] ^= 0xFF  # a wheel of the attacker's, with a checksum file to match
    sums = release.parse_sums((new.folder / release.SUMS).read_text())
    sums[new.wheel] = release.sha256(bytes(wheel))
    data = release.format_sums(sums).encode()
    srv.publish(
        new,
        **{new.wheel.replace(".", "__"): bytes(wheel)},
        sha256sums__txt=data,
        sha256sums__txt__sig=evil.sign(data),
    )
    _refused(installed, srv, "not made by any key this brain trusts")


@pytest.mark.slow
def test_truncated_download_is_refused(
    installed: Installed, srv: Server, releases: dict[str, Release]
) -> None:
    new = releases[NEW]
    srv.publish(new)
    srv.truncate.add(f"/releases/download/{NEW}/{new.wheel}")
    _refused(installed, srv, "cannot download")


@pytest.mark.slow
def test_wheel_cut_short_by_the_server_is_refused(
    installed: Installed, srv: Server, releases: dict[str, Release]
) -> None:
    new = releases[NEW]
    whole = (new.folder / new.wheel).read_bytes()
    srv.publish(new, **{new.wheel.replace(".", "__"): whole[: len(whole) // 3]})
    _refused(installed, srv, "does not match its sha256")


@pytest.mark.slow
def test_a_server_that_hangs_times_out(
    installed: Installed, srv: Server, releases: dict[str, Release]
) -> None:
    srv.publish(releases[NEW])
    srv.hang.add(f"/releases/download/{NEW}/{releases[NEW].wheel}")
    start = time.monotonic()
    _refused(installed, srv, "did not answer in time", BRAIN_UPDATE_TIMEOUT="1")
    assert time.monotonic() - start < 30


@pytest.mark.slow
def test_an_older_release_is_never_installed(
    installed: Installed, srv: Server, releases: dict[str, Release]
) -> None:
    srv.publish(releases[OLD])  # e.g. a replayed, genuinely signed, older release
    before = installed.marker()
    run = installed.brain("update", env=update_env(srv))
    assert run.returncode == 0, run.stderr
    assert "is the newest release" in run.stdout
    assert_untouched(installed, before)


@pytest.mark.slow
def test_a_brain_installed_by_another_tool_is_refused_with_its_command(
    tmp_path: Path, srv: Server, releases: dict[str, Release], deps_farm: Path
) -> None:
    inst = install_release(tmp_path / "venv", releases[OLD], deps_farm, marker=False)
    srv.publish(releases[NEW])
    run = inst.brain("update", env=update_env(srv))
    assert run.returncode == 1
    assert "was not installed by brain's installer" in run.stderr
    assert "pip install -U brain-memory" in run.stderr
    assert srv.hits == []  # refused before asking anyone
    assert inst.tag() == OLD


def test_a_local_build_never_updates_itself() -> None:
    from conftest import brain

    run = brain("update")
    assert run.code == 1
    assert "local build (dev)" in run.err
    assert run.err.count("\n") == 1


# --- in process: the pieces -----------------------------------------------------------------------


def test_other_manager_hints(monkeypatch: pytest.MonkeyPatch) -> None:
    monkeypatch.setattr(sys, "prefix", "/home/u/.local/share/pipx/venvs/brain-memory")
    assert "pipx upgrade brain-memory" in upd.other_manager_hint()
    monkeypatch.setattr(sys, "prefix", "/home/u/.local/share/uv/tools/brain-memory")
    assert "uv tool upgrade brain-memory" in upd.other_manager_hint()


@pytest.mark.slow
def test_notice_check_records_a_verified_tag(
    srv: Server, releases: dict[str, Release], test_key: Key, monkeypatch: pytest.MonkeyPatch
) -> None:
    monkeypatch.setenv("BRAIN_RELEASE_URL", srv.url)
    monkeypatch.setattr(release, "PUBLIC_KEYS", (test_key.public,))
    srv.publish(releases[NEW])
    assert notice.check_now() == NEW
    state = notice.read_state()
    assert state["latest"] == NEW
    assert notice.message(state, OLD) == (
        f"brain {NEW} is available (this is {OLD}); run `brain update` to install it"
    )
    assert notice.message(state, NEW) is None
    assert notice.message({**state, "skip": NEW}, OLD) is None
    # a forged checksum file is no news
    monkeypatch.setattr(release, "PUBLIC_KEYS", (make_key().public,))
    notice.write_state({})
    assert notice.check_now() is None
    assert "latest" not in notice.read_state()


@pytest.mark.slow
def test_notice_check_gives_up_after_its_timeout(
    srv: Server, releases: dict[str, Release], monkeypatch: pytest.MonkeyPatch
) -> None:
    monkeypatch.setenv("BRAIN_RELEASE_URL", srv.url)
    srv.publish(releases[NEW])
    srv.hang.add(f"/releases/latest/download/{release.SUMS}")
    start = time.monotonic()
    assert notice.check_now(seconds=0.5) is None
    assert time.monotonic() - start < 5


def test_notice_is_checked_once_a_day_even_when_the_check_fails(
    monkeypatch: pytest.MonkeyPatch, capsys: pytest.CaptureFixture[str]
) -> None:
    spawned: list[int] = []
    monkeypatch.setattr(notice, "wanted", lambda args: True)
    monkeypatch.setattr(notice, "_spawn_check", lambda: spawned.append(1))
    monkeypatch.setattr(release, "installed_tag", lambda: OLD)
    notice.after_command(["find", "x"])
    assert spawned == [1]
    notice.after_command(["find", "x"])  # the check failed (wrote nothing): still not due
    assert spawned == [1]
    assert capsys.readouterr().err == ""
    notice.write_state({**notice.read_state(), "latest": NEW})
    notice.after_command(["find", "x"])
    notice.after_command(["find", "x"])
    assert capsys.readouterr().err.count(f"brain: brain {NEW} is available") == 2  # every run
    state = notice.read_state()
    notice.write_state({**state, "checked": state["checked"] - notice.DAY - 1})
    notice.after_command(["find", "x"])
    assert spawned == [1, 1]


@pytest.mark.parametrize(
    ("args", "env", "tty"),
    [
        (["find", "x", "--json"], {}, True),
        (["update"], {}, True),
        (["find", "x"], {"BRAIN_NO_UPDATE": "1"}, True),
        (["find", "x"], {"CLAUDECODE": "1"}, True),
        (["find", "x"], {}, False),
    ],
)
def test_notice_is_for_a_person_at_a_terminal_only(
    args: list[str], env: dict[str, str], tty: bool, monkeypatch: pytest.MonkeyPatch
) -> None:
    monkeypatch.delenv("BRAIN_NO_UPDATE")
    for k, v in env.items():
        monkeypatch.setenv(k, v)
    monkeypatch.setattr(release, "installed_tag", lambda: OLD)
    monkeypatch.setattr(sys.stdout, "isatty", lambda: tty)
    monkeypatch.setattr(sys.stderr, "isatty", lambda: tty)
    assert notice.wanted(args) is False


def test_notice_wanted_at_a_terminal_for_a_release_build_only(
    monkeypatch: pytest.MonkeyPatch,
) -> None:
    monkeypatch.delenv("BRAIN_NO_UPDATE")
    monkeypatch.setattr(sys.stdout, "isatty", lambda: True)
    monkeypatch.setattr(sys.stderr, "isatty", lambda: True)
    monkeypatch.setattr(release, "installed_tag", lambda: OLD)
    assert notice.wanted(["find", "x"]) is True
    monkeypatch.setattr(release, "installed_tag", lambda: "dev")
    assert notice.wanted(["find", "x"]) is False


@pytest.mark.slow
def test_notice_shows_after_the_output_at_a_real_terminal(installed: Installed) -> None:
    """A pty for stdout and stderr: the notice comes after the command's own output."""
    import pty

    notice_state = {"checked": time.time(), "latest": NEW}
    env = {k: v for k, v in os.environ.items() if k != "BRAIN_NO_UPDATE"}
    state_file = Path(env["XDG_STATE_HOME"]) / "brain" / "update.json"
    state_file.parent.mkdir(parents=True, exist_ok=True)
    state_file.write_text(json.dumps(notice_state))
    master, slave = pty.openpty()
    proc = subprocess.Popen(
        [str(installed.bin / "brain"), "version"],
        stdin=subprocess.DEVNULL,
        stdout=slave,
        stderr=slave,
        env=env,
    )
    os.close(slave)
    chunks = []
    while True:
        try:
            data = os.read(master, 4096)
        except OSError:
            break
        if not data:
            break
        chunks.append(data)
    proc.wait(timeout=60)
    os.close(master)
    text = b"".join(chunks).decode()
    assert text.index(f"brain {OLD}") < text.index(f"brain {NEW} is available")
    piped = installed.brain("version", env={"BRAIN_NO_UPDATE": ""})
    assert "available" not in piped.stdout + piped.stderr


def test_unmanaged_refusal_in_process(monkeypatch: pytest.MonkeyPatch) -> None:
    monkeypatch.setattr(release, "installed_tag", lambda: OLD)
    with pytest.raises(BrainError, match="not installed by brain's installer"):
        upd.update()


def test_nothing_newer_answers_null_for_what_was_not_done(monkeypatch: pytest.MonkeyPatch) -> None:
    """Already the newest: no wheel, no check, no verdict of one; null in JSON, not "" or true."""
    import contextlib

    monkeypatch.setattr(release, "installed_tag", lambda: NEW)
    monkeypatch.setattr(upd, "_refuse_unmanaged", lambda tag: {})
    monkeypatch.setattr(release, "client", lambda *a, **k: contextlib.nullcontext())
    info = release.ReleaseInfo(NEW, "abc", "brain-0-py3-none-any.whl")
    monkeypatch.setattr(release, "latest", lambda http: release.Offer(info, {}))
    monkeypatch.setattr(notice, "remember_latest", lambda tag: None)
    result = upd.update()
    assert (result.action, result.previous, result.current) == ("current", NEW, NEW)
    assert (result.wheel, result.check, result.check_ok) == (None, None, None)
