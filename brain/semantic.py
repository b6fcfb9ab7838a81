"""The vector half of hybrid search: unit embeddings stored in the index, brute-force cosine.

Vectors are keyed by a hash of the text they embed, so re-parsing a file re-embeds only the units
whose text changed; the index records the model id and drops every vector when it changes.
numpy and the model load only here, only when a command needs them.
"""

from __future__ import annotations

import contextlib
import contextvars
import sqlite3
import sys
from collections.abc import Callable, Iterator
from dataclasses import dataclass
from pathlib import Path
from typing import TYPE_CHECKING, Any

from brain import config
from brain.errors import BrainError
from brain.index import embed_text, transaction
from brain.search import Near
from brain.vault import Unit
from brain.vocab import split_aliases

if TYPE_CHECKING:
    import numpy as np
    import numpy.typing as npt

    from brain.embed import Embedder
    from brain.index import SyncReport

PROVIDERS = ("onnx", "e5", "none", "ollama", "openai")
# Cosine similarity is not on one scale across models. multilingual-e5 was trained at temperature
# 0.01 and puts nearly every pair between 0.7 and 1: on testdata/golden.jsonl the right answer
# stands out from the median of the top ten by .044 (MiniLM: .199) and an unanswerable question's
# best hit by .015 (MiniLM: .071), 4.5 and 4.7 times narrower. Its similarities are stretched
# about 1 by that factor, so that margins and bars set on MiniLM hold for it too.
SPREAD = {"e5": 4.6}
Progress = Callable[[int, int], None]  # (done, total)
BATCH = 64


def embed_settings() -> tuple[str, dict[str, Any]]:
    """The provider and its options: `BRAIN_EMBED`, else `embed:` in brain.yaml, else onnx.

    `BRAIN_EMBED` is a provider name, optionally with a model: `ollama:nomic-embed-text`.
    """
    from brain.settings import current

    raw = current().embed
    section: Any = {}
    if raw != "none":
        section = config.settings().get("embed") or {}
        if isinstance(section, str):
            section = {"provider": section}
        if not isinstance(section, dict):
            raise BrainError(
                "brain.yaml: `embed` must be a mapping", "see Settings in docs/commands.md"
            )
    options = {k: v for k, v in section.items() if k != "provider"}
    if raw:
        provider, _, model = raw.partition(":")
        if model:
            options["model"] = model
        if section.get("provider", provider) != provider:
            options = {"model": model} if model else {}
    else:
        provider = str(section.get("provider", "onnx"))
    if provider not in PROVIDERS:
        raise BrainError(
            f"unknown embedding provider {provider!r}", f"use one of {', '.join(PROVIDERS)}"
        )
    return provider, options


_LOADED: dict[str, Embedder | None] = {}


def load() -> Embedder | None:
    """The configured embedder, or None for keyword-only. A model that cannot load is a warning,
    never a failure: search falls back to keywords."""
    provider, options = embed_settings()
    if provider == "none":
        return None
    key = repr((provider, sorted(options.items())))
    if key in _LOADED:
        return _LOADED[key]
    from brain.embed import EmbedError, load_embedder

    try:
        embedder = load_embedder(provider, options, cache_dir=config.data_dir() / "models")
    except EmbedError as exc:
        warn(f"semantic search is off: {exc}")
        embedder = None
    _LOADED[key] = embedder  # one model per process: loading costs far more than a query
    return embedder


# The warnings said inside `warnings_once()`: a command that asks many finds (log asks each miss
# again, doctor each frequent query) says the index's state once, not once a find. A context
# variable, so that each command the warm worker runs in its own thread has its own.
_SAID: contextvars.ContextVar[set[str] | None] = contextvars.ContextVar("said", default=None)


@contextlib.contextmanager
def warnings_once() -> Iterator[None]:
    """Within this block each warning is written once."""
    token = _SAID.set(set())
    try:
        yield
    finally:
        _SAID.reset(token)


def warn(message: str) -> None:
    from brain.text import sanitized  # the output step: a message may quote a setting's value

    said = _SAID.get()
    if said is not None:
        if message in said:
            return
        said.add(message)
    sys.stderr.write(sanitized(f"brain: {message}") + "\n")


def update(
    conn: sqlite3.Connection,
    embedder: Embedder,
    progress: Progress | None = None,
) -> int:
    """Embed every unit that has no vector for this model; drop vectors nothing uses. Returns how
    many texts were embedded. Commits per batch: an interrupted run keeps what it finished."""
    import numpy as np

    if index_model(conn) != embedder.model_id:
        with transaction(conn):
            conn.execute("DELETE FROM vectors")
            conn.execute(
                "INSERT OR REPLACE INTO meta(key, value) VALUES ('model', ?)", (embedder.model_id,)
            )
    todo: dict[str, str] = {}
    for vhash, path, line, kind, handle, aliases, text, section in conn.execute(
        "SELECT u.vhash, u.path, u.line, u.kind, u.handle, u.aliases, u.text, u.section"
        " FROM units u LEFT JOIN vectors v ON v.hash = u.vhash WHERE v.hash IS NULL"
    ):
        unit = Unit(path, line, kind, text, section, handle, split_aliases(aliases))
        todo.setdefault(vhash, embed_text(unit))
    items = list(todo.items())
    done = 0
    for start in range(0, len(items), BATCH):
        batch = items[start : start + BATCH]
        vecs = np.asarray(embedder.embed([t for _, t in batch]), dtype=np.float32)
        with transaction(conn):
            conn.executemany(
                "INSERT OR REPLACE INTO vectors(hash, vec) VALUES (?, ?)",
                [(h, vecs[i].tobytes()) for i, (h, _) in enumerate(batch)],
            )
        done += len(batch)
        if progress:
            progress(done, len(items))
    with transaction(conn):
        conn.execute("DELETE FROM vectors WHERE hash NOT IN (SELECT vhash FROM units)")
    return done


@dataclass(frozen=True)
class Reindexed:
    """An index brought up to date with the Markdown: the index's report, the embedding model of
    its vectors (None for keyword only) and how many units this run embedded."""

    report: SyncReport
    model: str | None
    embedded: int


def reindex(vault: Path, *, full: bool = False, progress: Progress | None = None) -> Reindexed:
    """`brain reindex`'s work, which a background sync pass does after a receive too: the index
    brought up to date (rebuilt with `full`), git history read for the notes' dates, and what
    changed embedded when an embedder is configured (a failing one leaves keywords only, said);
    the histories of the code the bullets name are read since the last reindex (brain.drift)."""
    from brain import index

    # Only here (and at install) is git history read for the notes' dates: the post-commit hook
    # runs this after every commit, and a find never walks history.
    report = index.rebuild(vault, history=True) if full else index.sync(vault, history=True)
    from brain import drift

    drift.update(vault)  # the code the bullets name: histories read since the last reindex
    model: str | None = None
    embedded = 0
    embedder = load()
    if embedder is not None:
        from brain.embed import EmbedError

        conn = index.connect(vault)
        try:
            embedded = update(conn, embedder, progress)
            model = embedder.model_id
        except EmbedError as exc:
            warn(f"the index has keywords only for now: {exc}")
        finally:
            conn.close()
    return Reindexed(report, model, embedded)


def stretch(sims: npt.NDArray[np.float32], model: str) -> npt.NDArray[np.float32]:
    """Cosines of `model` on MiniLM's scale (see SPREAD); unknown models as they are."""
    factor = SPREAD.get(model.split(":", 1)[0], 1.0)
    return sims if factor == 1.0 else (1.0 - factor * (1.0 - sims)).astype(sims.dtype)


def index_model(conn: sqlite3.Connection) -> str:
    row = conn.execute("SELECT value FROM meta WHERE key = 'model'").fetchone()
    return str(row[0]) if row else ""


def missing(conn: sqlite3.Connection, model: str) -> int:
    """Texts without a vector from `model` (edited since the last reindex, or a new model)."""
    if index_model(conn) != model:
        return int(conn.execute("SELECT count(DISTINCT vhash) FROM units").fetchone()[0])
    row = conn.execute(
        "SELECT count(DISTINCT u.vhash) FROM units u LEFT JOIN vectors v ON v.hash = u.vhash"
        " WHERE v.hash IS NULL"
    ).fetchone()
    return int(row[0])


@dataclass
class Matrix:
    """Every unit's vector, one row each, in memory; rebuilt when the index's build changes."""

    built: str
    model: str
    ids: npt.NDArray[np.int64]
    vecs: npt.NDArray[np.float32]


_CACHE: dict[str, Matrix] = {}


def matrix(conn: sqlite3.Connection, model: str, key: str = "") -> Matrix:
    """Every unit's vector in memory, cached per index until its build stamp changes."""
    import numpy as np

    built = str(conn.execute("SELECT value FROM meta WHERE key = 'built'").fetchone()[0])
    cached = _CACHE.get(key)
    if cached and cached.built == built and cached.model == model:
        return cached
    rows = conn.execute(
        "SELECT u.id, v.vec FROM units u JOIN vectors v ON v.hash = u.vhash ORDER BY u.id"
    ).fetchall()
    ids = np.fromiter((r[0] for r in rows), dtype=np.int64, count=len(rows))
    if rows:
        vecs = np.frombuffer(b"".join(r[1] for r in rows), dtype=np.float32)
        vecs = vecs.reshape(len(rows), -1)
    else:
        vecs = np.zeros((0, 1), dtype=np.float32)
    found = Matrix(built, model, ids, vecs)
    _CACHE[key] = found
    return found


def search(
    conn: sqlite3.Connection, embedder: Embedder, text: str, k: int, key: str = ""
) -> list[tuple[int, float]]:
    """The k units nearest to `text` by cosine, best first: (unit id, cosine)."""
    return nearest(conn, embedder, text, k, key).hits


def nearest(conn: sqlite3.Connection, embedder: Embedder, text: str, k: int, key: str = "") -> Near:
    """The k units nearest to `text` by cosine, best first, and its nearest general question's
    cosine (`general`)."""
    import numpy as np

    m = matrix(conn, embedder.model_id, key)
    if not len(m.ids):
        return Near([])
    q = np.asarray(embedder.embed([text], query=True)[0], dtype=np.float32)
    sims = stretch(m.vecs @ q, embedder.model_id)
    k = min(k, len(sims))
    top = np.argpartition(-sims, k - 1)[:k]
    top = top[np.argsort(-sims[top], kind="stable")]
    hits = [(int(m.ids[i]), round(float(sims[i]), 6)) for i in top]
    world = general(embedder)
    best = None
    if len(world):
        best = round(float(stretch(world @ q, embedder.model_id).max()), 6)
    return Near(hits, best)


# --- What the world asks (issue 27) ---------------------------------------------------------
#
# A question the vault holds nothing for may still share its words with a few units ("explain
# the rules of cricket" with bullets that say "rules" and "explaining"): find's weak answer
# served them, four lines nobody asked for. What tells such a question apart is that the world
# answers it: its meaning is nearer some general question than any unit of the vault (and a
# question nearer a unit than any general question is the vault's, whatever its words). GENERAL
# holds 627 questions people ask a general assistant or a search engine, everyday and
# programming ones, written for brain by an engineer who had not seen the evaluation sets
# (testdata/, ../eval): `Evidence.world` is a hit's cosine over the query's nearest of them.
# Embedded once per model and kept beside the model (config.data_dir()/models): 1.6 s for MiniLM
# on this machine; the warm worker does it at its start, before it hands back what it freed.
GENERAL = Path(__file__).parent / "data" / "general.txt"
_WORLD: dict[str, npt.NDArray[np.float32]] = {}


def general(embedder: Embedder) -> npt.NDArray[np.float32]:
    """GENERAL's questions embedded by `embedder`, a row each. None at all when the file is
    missing or the embedder fails on them (an HTTP provider's server refusing 627 texts): the
    rules then ask nothing of them, and the search goes on without."""
    import hashlib

    import numpy as np

    if embedder.model_id in _WORLD:
        return _WORLD[embedder.model_id]
    try:
        raw = GENERAL.read_bytes()
    except OSError:
        raw = b""
    lines = [t for t in raw.decode("utf-8", "replace").splitlines() if t and not t.startswith("#")]
    key = hashlib.sha256(embedder.model_id.encode() + b"\0" + raw).hexdigest()[:16]
    cached = config.data_dir() / "models" / f"general-{key}.npy"
    vecs: npt.NDArray[np.float32] | None = None
    try:
        loaded = np.load(cached, allow_pickle=False)
        if loaded.shape == (len(lines), embedder.dim):
            vecs = loaded.astype(np.float32, copy=False)
    except (OSError, ValueError):
        pass
    if vecs is None:
        from brain.embed import EmbedError

        try:
            vecs = np.asarray(embedder.embed(lines, query=True), dtype=np.float32)
            vecs = vecs.reshape(len(lines), -1)
            _keep(cached, vecs)
        except EmbedError as exc:  # this process asks no more; the next one tries again
            warn(f"the general questions were not embedded, so none is compared: {exc}")
            vecs = np.zeros((0, 1), dtype=np.float32)
    _WORLD[embedder.model_id] = vecs
    return vecs


def _keep(path: Path, vecs: npt.NDArray[np.float32]) -> None:
    """Write the embedded questions beside the model, whole or not at all (a cache: a folder
    that cannot be written costs the next process the embedding, nothing else)."""
    import io

    import numpy as np

    from brain.files import write_atomic

    buf = io.BytesIO()
    np.save(buf, vecs, allow_pickle=False)
    try:
        path.parent.mkdir(parents=True, exist_ok=True)
        write_atomic(path, buf.getvalue())
    except OSError:
        pass
