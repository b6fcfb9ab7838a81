"""The disposable index: incremental sync, full rebuilds, and recovery from anything on disk."""

from __future__ import annotations

import os
import random
import shutil
import signal
import sqlite3
import subprocess
import sys
import time
from pathlib import Path

import pytest
from conftest import FIXTURE_VAULT, ROOT, brain

from brain import index
from brain.config import index_path
from brain.vault import NOTE_MAX

LIBGIT2 = "AI/LEARNINGS.md:7"


def idx(vault: Path) -> Path:
    return index_path(vault.resolve())


def reindex(vault: Path, *args: str) -> dict[str, object]:
    run = brain("reindex", "--vault", str(vault), "--json", *args)
    assert run.code == 0, run
    assert "Traceback" not in run.err
    doc: dict[str, object] = run.json()
    return doc


def first_locator(vault: Path, query: str) -> str:
    run = brain("find", "--vault", str(vault), query)
    assert run.code == 0, run
    assert run.err == ""
    return run.out.split(" ", 1)[0]


def units_of(vault: Path, rel: str) -> int:
    conn = sqlite3.connect(idx(vault))
    try:
        return int(conn.execute("SELECT count(*) FROM units WHERE path = ?", (rel,)).fetchone()[0])
    finally:
        conn.close()


def pragma(vault: Path, name: str) -> object:
    conn = sqlite3.connect(idx(vault))
    try:
        return conn.execute(f"PRAGMA {name}").fetchone()[0]
    finally:
        conn.close()


def line_of(vault: Path, rel: str, needle: str) -> str:
    """`rel:N` for the first line of `rel` that contains `needle`."""
    lines = (vault / rel).read_text(encoding="utf-8").split("\n")
    return f"{rel}:{next(i for i, line in enumerate(lines, start=1) if needle in line)}"


def all_tracked(vault: Path) -> set[str]:
    files = {p.relative_to(vault).as_posix() for p in vault.rglob("*.md")}
    return (files - {"AI/INBOX.md"}) | {"AI/synonyms.tsv"}


# --- incremental and full -----------------------------------------------------------------------


def test_first_reindex_reads_everything_then_nothing(vault: Path) -> None:
    first = reindex(vault)
    assert set(first["changed"]) == all_tracked(vault)  # type: ignore[arg-type]
    assert first["file_count"] == len(all_tracked(vault))
    second = reindex(vault)
    assert second["changed"] == []
    assert second["removed"] == []
    assert second["unit_count"] == first["unit_count"]
    assert second["bullet_count"] == first["bullet_count"]
    assert first["bullet_count"] == 151  # every bullet of the three fixture core files


def test_reindex_reads_only_the_edited_file(vault: Path) -> None:
    reindex(vault)
    note = vault / "notes" / "ideas.md"
    note.write_text(note.read_text(encoding="utf-8") + "\nA thylacine sighting.\n", "utf-8")
    report = reindex(vault)
    assert report["changed"] == ["notes/ideas.md"]
    assert report["removed"] == []
    assert first_locator(vault, "thylacine") == line_of(vault, "notes/ideas.md", "thylacine")


def test_touched_but_unchanged_file_is_not_reparsed(vault: Path) -> None:
    reindex(vault)
    note = vault / "notes" / "ideas.md"
    os.utime(note, ns=(time.time_ns(), time.time_ns() + 5_000_000_000))
    assert reindex(vault)["changed"] == []


def test_deleted_file_is_removed_with_its_units(vault: Path) -> None:
    reindex(vault)
    rel = "projects/website/state/todo.md"
    assert units_of(vault, rel) > 0
    assert first_locator(vault, "hero video").startswith(rel)
    (vault / rel).unlink()
    report = reindex(vault)
    assert report["removed"] == [rel]
    assert report["changed"] == []
    assert units_of(vault, rel) == 0
    run = brain("find", "--vault", str(vault), "--json", "--limit", "50", "hero video")
    assert rel not in {hit["path"] for hit in run.json()["hits"]}


def test_full_rebuild_reads_everything(vault: Path) -> None:
    incremental = reindex(vault)
    full = reindex(vault, "--full")
    assert full["full"] is True
    assert incremental["full"] is False or incremental["changed"]
    assert set(full["changed"]) == all_tracked(vault)  # type: ignore[arg-type]
    assert (full["unit_count"], full["bullet_count"]) == (
        incremental["unit_count"],
        incremental["bullet_count"],
    )
    assert first_locator(vault, "libgit2") == LIBGIT2


def test_sync_no_longer_reindexes(vault: Path) -> None:
    """`brain sync` was an alias of `reindex`; it now shares the vault over git (see
    tests/test_sync.py) and says so when the vault is not a git repository."""
    reindex(vault)
    run = brain("sync", "--vault", str(vault))
    assert run.code == 1
    assert "is not a git repository, so it cannot sync" in run.err
    assert "Index" not in run.out


def test_built_changes_on_every_sync(vault: Path) -> None:
    stamps = [reindex(vault)["built_at"] for _ in range(3)]
    stamps.append(reindex(vault, "--full")["built_at"])
    assert len(set(stamps)) == len(stamps)
    conn = sqlite3.connect(idx(vault))
    try:
        assert (
            conn.execute("SELECT value FROM meta WHERE key = 'built'").fetchone()[0] == stamps[-1]
        )
        assert index.built(conn) == stamps[-1]
    finally:
        conn.close()


@pytest.mark.parametrize("how", ["fresh", "full-over-existing", "incremental"])
def test_index_is_in_wal_mode(vault: Path, how: str) -> None:
    reindex(vault)
    if how == "full-over-existing":
        reindex(vault, "--full")
    elif how == "incremental":
        (vault / "notes" / "new.md").write_text("A new note.\n", encoding="utf-8")
        reindex(vault)
    assert pragma(vault, "journal_mode") == "wal"
    assert pragma(vault, "user_version") == index.SCHEMA_VERSION


def test_index_never_lives_in_the_vault(vault: Path, isolated_env: Path) -> None:
    before = sorted(p.relative_to(vault) for p in vault.rglob("*"))
    reindex(vault)
    assert idx(vault).is_file()
    assert idx(vault).is_relative_to(isolated_env)
    assert sorted(p.relative_to(vault) for p in vault.rglob("*")) == before


# --- recovery -----------------------------------------------------------------------------------


def test_wrong_schema_version_is_rebuilt_silently(vault: Path) -> None:
    reindex(vault)
    conn = sqlite3.connect(idx(vault))
    conn.execute("PRAGMA user_version = 99")
    conn.close()
    assert first_locator(vault, "libgit2") == LIBGIT2
    assert pragma(vault, "user_version") == index.SCHEMA_VERSION


def test_old_schema_without_tables_is_rebuilt(vault: Path) -> None:
    reindex(vault)
    conn = sqlite3.connect(idx(vault))
    conn.execute("DROP TABLE meta")
    conn.close()
    assert first_locator(vault, "libgit2") == LIBGIT2


def _garbage(kind: str, real: bytes) -> bytes:
    rng = random.Random(kind)  # noqa: S311 - reproducible garbage, not a secret
    if kind == "random":
        return rng.randbytes(64 * 1024)
    if kind == "empty":
        return b""
    if kind == "header-only":
        return real[:100]
    if kind == "truncated":
        return real[: len(real) // 3]
    if kind == "scribbled":  # a valid header, garbage pages
        return real[:4096] + rng.randbytes(len(real) - 4096)
    raise AssertionError(kind)


@pytest.mark.parametrize("kind", ["random", "empty", "header-only", "truncated", "scribbled"])
def test_corrupt_index_is_rebuilt_silently_by_find(vault: Path, kind: str) -> None:
    reindex(vault)
    path = idx(vault)
    real = path.read_bytes()
    assert len(real) > 3 * 4096
    path.write_bytes(_garbage(kind, real))
    assert first_locator(vault, "libgit2") == LIBGIT2
    assert first_locator(vault, "backblaze") == line_of(
        vault, "notes/home-network.md", "A Synology"
    )
    assert pragma(vault, "user_version") == index.SCHEMA_VERSION
    assert pragma(vault, "journal_mode") == "wal"


def test_corrupt_index_is_rebuilt_by_reindex(vault: Path) -> None:
    reindex(vault)
    idx(vault).write_bytes(b"\x00garbage" * 4096)
    report = reindex(vault)
    assert set(report["changed"]) == all_tracked(vault)  # type: ignore[arg-type]
    assert first_locator(vault, "libgit2") == LIBGIT2


def test_deleted_index_is_rebuilt_silently(vault: Path) -> None:
    reindex(vault)
    for suffix in ("", "-wal", "-shm"):
        Path(f"{idx(vault)}{suffix}").unlink(missing_ok=True)
    assert first_locator(vault, "libgit2") == LIBGIT2
    assert idx(vault).is_file()


def test_deleted_state_dir_is_recreated(vault: Path, isolated_env: Path) -> None:
    reindex(vault)
    state = isolated_env / ".local" / "state"
    for path in sorted(state.rglob("*"), reverse=True):
        path.rmdir() if path.is_dir() else path.unlink()
    assert first_locator(vault, "libgit2") == LIBGIT2


# --- find keeps the index fresh -----------------------------------------------------------------


def test_find_picks_up_an_edited_bullet_without_reindex(vault: Path) -> None:
    reindex(vault)
    learnings = vault / "AI" / "LEARNINGS.md"
    text = learnings.read_text(encoding="utf-8")
    edited = text.replace("call the hook script yourself", "call the ocelot script yourself", 1)
    assert edited != text
    learnings.write_text(edited, encoding="utf-8")
    assert first_locator(vault, "ocelot") == LIBGIT2
    run = brain("find", "--vault", str(vault), "--json", "ocelot")
    assert "ocelot script" in run.json()["hits"][0]["text"]


def test_find_sees_new_and_deleted_files_without_reindex(vault: Path) -> None:
    reindex(vault)
    (vault / "notes" / "fresh.md").write_text("# Fresh\n\nThe okapi arrived.\n", "utf-8")
    assert first_locator(vault, "okapi") == "notes/fresh.md:3"
    (vault / "notes" / "fresh.md").unlink()
    assert brain("find", "--vault", str(vault), "okapi").code == 1


def test_open_index_reflects_disk_in_process(vault: Path) -> None:
    conn = index.open_index(vault.resolve())
    try:
        before = conn.execute("SELECT count(*) FROM units").fetchone()[0]
    finally:
        conn.close()
    (vault / "notes" / "extra.md").write_text("One.\n\nTwo.\n", encoding="utf-8")
    conn = index.open_index(vault.resolve())
    try:
        assert conn.execute("SELECT count(*) FROM units").fetchone()[0] == before + 2
    finally:
        conn.close()


# --- concurrency and crashes --------------------------------------------------------------------

WRITER = """
import os
import sys
from pathlib import Path
from brain import index
vault, rounds = Path(sys.argv[1]), int(sys.argv[2])
note = vault / "notes" / "churn.md"
tmp = vault / "notes" / f".churn-{os.getpid()}.tmp"
for i in range(rounds):
    # saved the way editors save: a reader never sees a half-written file
    tmp.write_text(f"# Churn\\n\\nRevision {i} of the churn note, marker{i}.\\n", "utf-8")
    os.replace(tmp, note)
    if i % 3 == 2:
        index.rebuild(vault)
    else:
        index.sync(vault)
"""

READER = """
import sys
from pathlib import Path
from brain.commands.find import find
vault, rounds = Path(sys.argv[1]), int(sys.argv[2])
for _ in range(rounds):
    hits = find(vault, "libgit2").hits
    assert hits and (hits[0].path, hits[0].line) == ("AI/LEARNINGS.md", 7), hits
    hits = find(vault, "churn note").hits
    assert hits and hits[0].path == "notes/churn.md", hits
"""


def _script(code: str, *args: str) -> subprocess.Popen[str]:
    return subprocess.Popen(
        [sys.executable, "-c", code, *args],
        stdout=subprocess.PIPE,
        stderr=subprocess.PIPE,
        text=True,
        cwd=ROOT,
    )


@pytest.mark.slow
def test_reindex_loop_and_finds_in_other_processes(vault: Path) -> None:
    (vault / "notes" / "churn.md").write_text("# Churn\n\nThe churn note.\n", "utf-8")
    reindex(vault)
    target = str(vault.resolve())
    procs = [
        _script(WRITER, target, "30"),
        _script(WRITER, target, "30"),  # two writers: rebuilds race each other too
        _script(READER, target, "40"),
        _script(READER, target, "40"),
    ]
    cli_runs = []
    while any(p.poll() is None for p in procs):
        cli_runs.append(brain("find", "--vault", target, "libgit2"))
    for p in procs:
        _, err = p.communicate(timeout=120)
        assert p.returncode == 0, err
        assert err == ""
    assert cli_runs
    for run in cli_runs:
        assert run.code == 0, run
        assert run.err == ""
        assert run.out.split(" ", 1)[0] == LIBGIT2
    assert first_locator(vault, "marker29") == "notes/churn.md:3"


@pytest.fixture(scope="module")
def big_vault(tmp_path_factory: pytest.TempPathFactory) -> Path:
    """The fixture vault plus 15,000 generated bullets and 800 notes (read-only in tests)."""
    root = tmp_path_factory.mktemp("big") / "vault"
    shutil.copytree(FIXTURE_VAULT, root)
    vocab = (
        "alpha bravo charlie delta echo foxtrot golf hotel india juliet kilo lima mike november"
        " oscar papa quebec romeo sierra tango uniform victor whiskey xray yankee zulu"
    ).split()

    def phrase(seed: int, k: int) -> str:
        return " ".join(vocab[(seed * 7 + j * 3) % len(vocab)] for j in range(k))

    bullets = [
        f"- **filler {i}** (aliases: f{i}) — {phrase(i, 14)} item{i} — gen"
        f" — 2025-01-{i % 28 + 1:02d}"
        for i in range(15_000)
    ]
    with (root / "AI" / "MEMORY.md").open("a", encoding="utf-8") as fh:
        fh.write("\n## Generated\n\n" + "\n".join(bullets) + "\n")
    for n in range(800):
        folder = root / "gen" / f"d{n % 16}"
        folder.mkdir(parents=True, exist_ok=True)
        paras = (f"{phrase(n + p, 12)}\n{phrase(n * p, 12)} para{n}x{p}." for p in range(10))
        (folder / f"note{n}.md").write_text(f"# Note {n}\n\n" + "\n\n".join(paras) + "\n", "utf-8")
    return root


@pytest.mark.slow
@pytest.mark.parametrize("existing", [True, False], ids=["index-existed", "no-index"])
def test_kill_mid_reindex_leaves_a_working_index(big_vault: Path, existing: bool) -> None:
    path = idx(big_vault)
    if existing:
        reindex(big_vault)
    proc = subprocess.Popen(
        [sys.executable, "-m", "brain", "reindex", "--full", "--vault", str(big_vault)],
        stdout=subprocess.DEVNULL,
        stderr=subprocess.DEVNULL,
    )
    tmp = path.with_name(f"{path.name}.tmp-{proc.pid}")
    deadline = time.monotonic() + 30
    while not tmp.exists() and proc.poll() is None and time.monotonic() < deadline:
        time.sleep(0.005)
    time.sleep(0.1)  # well into the build: the whole build takes about a second
    still_running = proc.poll() is None
    proc.send_signal(signal.SIGKILL)
    proc.wait()
    assert still_running, "the rebuild finished before it could be killed; grow the vault"

    assert first_locator(big_vault, "libgit2") == LIBGIT2
    expected = line_of(big_vault, "AI/MEMORY.md", "**filler 14999**")
    assert first_locator(big_vault, "item14999") == expected
    assert first_locator(big_vault, "para799x9") == "gen/d15/note799.md:30"
    report = reindex(big_vault)
    assert report["changed"] == []
    assert report["bullet_count"] == 151 + 15_000
    reindex(big_vault, "--full")
    assert not list(path.parent.glob(f"{path.name}.tmp-*"))  # the killed build's leftovers


BARE = "okapi cache ttl: the okapi cache keeps entries for 90 s"  # the bullet below, embedded


class Recorder:
    """An embedder that records what it is asked to embed (and gives every text one vector)."""

    model_id = "recorder"
    dim = 2

    def __init__(self) -> None:
        self.seen: list[str] = []

    def embed(self, texts: list[str], **_: object) -> object:
        import numpy as np

        self.seen.extend(texts)
        return np.ones((len(texts), 2), dtype=np.float32)


def add_bare_bullet(vault: Path) -> None:
    """A bullet with no aliases, in the vault's copy (the fixture's are not indexed)."""
    memory = vault / "AI" / "MEMORY.md"
    bare = "- **okapi cache ttl** — the okapi cache keeps entries for 90 s — me — 2026-11-30"
    memory.write_text(memory.read_text("utf-8").rstrip("\n") + f"\n{bare}\n", "utf-8")


def test_a_bullet_is_embedded_as_its_index_says_with_or_without_aliases(vault: Path) -> None:
    """The text each vector stands for is `embed_text` of the vault's unit, as its hash says: a
    bullet with no aliases is `handle: fact`, not `handle (): fact` (the index stores its
    aliases as "", which split into one empty alias)."""
    from brain import semantic

    add_bare_bullet(vault)
    assert brain("reindex", "--vault", str(vault)).code == 0  # keywords only (BRAIN_EMBED=none)
    recorder = Recorder()
    with sqlite3.connect(index_path(vault)) as conn:
        semantic.update(conn, recorder)  # type: ignore[arg-type]
        hashes = {r[0] for r in conn.execute("SELECT vhash FROM units")}
    seen = recorder.seen
    assert BARE in seen
    assert any(t.startswith("pgxpool max conns (") for t in seen)  # a bullet with aliases
    assert not [t for t in seen if "(): " in t]
    assert {index.text_hash(t) for t in seen} == hashes


def test_vectors_of_bare_bullets_made_before_schema_6_are_made_again(vault: Path) -> None:
    """A rebuild keeps the old index's vectors, but not those an older brain made from the wrong
    text (a bullet with no aliases, before schema 6): those are embedded again, nothing else."""
    from brain import semantic

    add_bare_bullet(vault)
    assert brain("reindex", "--vault", str(vault)).code == 0
    with sqlite3.connect(index_path(vault)) as conn:
        assert semantic.update(conn, Recorder()) > 100  # type: ignore[arg-type]
        conn.execute("PRAGMA user_version = 5")
    index.rebuild(vault)
    again = Recorder()
    with sqlite3.connect(index_path(vault)) as conn:
        semantic.update(conn, again)  # type: ignore[arg-type]
        rows = conn.execute("SELECT handle, text FROM units WHERE kind = 'bullet' AND aliases = ''")
        bare_texts = sorted(f"{handle}: {text}" for handle, text in rows)
    assert BARE in bare_texts
    assert sorted(again.seen) == bare_texts


def test_a_note_over_the_size_a_note_may_be_is_named_and_not_read(tmp_path: Path) -> None:
    """A 138 MB note received by sync took a full reindex 8 minutes and 4.8 GB, and every find
    waits on the index: a file over vault.NOTE_MAX is not read, and lint names it in one line;
    once it is cut down to a note, it is indexed."""
    vault = tmp_path / "vault"
    shutil.copytree(FIXTURE_VAULT, vault)
    dump = vault / "notes" / "dump.md"
    line = "zanzibarquux " + "filler words of a log that nobody reads " * 3 + "\n"
    dump.write_text("# Dump\n\n" + line * (NOTE_MAX // len(line) + 10), encoding="utf-8")
    run = brain("reindex", "--vault", str(vault))
    assert run.code == 0, run
    assert "1 problem in the vault; run `brain lint` to see it" in run.err
    lint = brain("lint", "--vault", str(vault))
    said = [ln for ln in lint.out.splitlines() if "notes/dump.md" in ln]
    assert len(said) == 1, lint
    assert "MB, over the 4 MB brain reads of a file: not read (split it" in said[0]
    assert brain("find", "--vault", str(vault), "zanzibarquux").code == 1
    dump.write_text("# Dump\n\n" + line, encoding="utf-8")
    assert brain("reindex", "--vault", str(vault)).code == 0
    assert "zanzibarquux" in brain("find", "--vault", str(vault), "zanzibarquux").out


def test_a_size_over_the_limit_is_said_in_plain_megabytes() -> None:
    from brain.vault import over_max

    said = [over_max(n).split(" MB")[0] for n in (NOTE_MAX + 20_000, 5 << 20, 1234 << 20, 10 << 30)]
    assert said == ["4.02", "5", "1,234", "10,240"]  # never 1.23e+03
