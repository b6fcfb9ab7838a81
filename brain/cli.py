"""Entry point: error handling for every command, and the runners that call a command and render it.

`brain find` is the hot path (agents call it many times a session), so `main` parses it here with a
small table that mirrors the Typer command's options and never imports Typer; anything the table
does not understand (`--help`, a typo) falls through to the Typer app in `brain.app`, which a
contract test keeps in step with the table.
"""

from __future__ import annotations

import math
import os
import sys
import time
from collections.abc import Callable, Sequence
from pathlib import Path
from typing import TYPE_CHECKING, Any

from brain.errors import BrainError, UsageError

STARTED = time.monotonic()  # near the process's start: the daily sweep's budget counts from here

if TYPE_CHECKING:
    from brain.commands.pack import HookEvent

_STARTED = time.monotonic()  # prime's deadline counts from here, imports included

# name -> (destination, takes a value); mirrors `brain.app.find_command`.
FIND_OPTIONS: dict[str, tuple[str, bool]] = {
    "--vault": ("vault", True),
    "--limit": ("limit", True),
    "-n": ("limit", True),
    "--budget": ("budget", True),
    "--raw": ("raw", False),
    "--terse": ("terse", False),
    "--json": ("as_json", False),
}


_INT_OPTIONS = frozenset({"limit", "budget"})


def _parse(
    args: Sequence[str], table: dict[str, tuple[str, bool]]
) -> tuple[dict[str, object], list[str]] | None:
    """Parse `args` against a fast-path option table: (options, positional words), or None when
    anything is not understood (`--help`, a typo, a bad number), so that Typer handles it and says
    what is wrong."""
    opts: dict[str, object] = {}
    words: list[str] = []
    it = iter(args)
    for arg in it:
        if arg == "--":
            words.extend(it)
            break
        name, eq, value = arg.partition("=")
        if not arg.startswith("-") or arg == "-" or (name not in table and _is_text(arg)):
            words.append(arg)
            continue
        spec = table.get(name)
        if spec is None:
            return None
        dest, takes = spec
        if not takes:
            if eq:
                return None
            opts[dest] = True
            continue
        if not eq:
            nxt = next(it, None)
            if nxt is None:
                return None
            value = nxt
        if dest in _INT_OPTIONS:
            try:
                opts[dest] = int(value)
            except ValueError:
                return None
        else:
            opts[dest] = value
    return opts, words


def _is_text(arg: str) -> bool:
    """An argument that starts with a dash but is text, not an option: it holds a space (a
    Markdown bullet `- **handle** — fact`, a query `-- why`); no option name does."""
    return any(c.isspace() for c in arg.partition("=")[0])


def words_last(args: Sequence[str], table: dict[str, tuple[str, bool]]) -> list[str]:
    """`args` for Typer with the positional words after `--` when one of them starts with a dash
    (Click would take `- **handle** — fact` for an unknown option `-`); unchanged when anything
    is not understood (`--help`, a typo), so that Typer says what is wrong."""
    opts: list[str] = []
    words: list[str] = []
    it = iter(args)
    for arg in it:
        name = arg.partition("=")[0]
        if arg == "--":
            words.extend(it)
        elif arg.startswith("-") and name in table:
            opts.append(arg)
            nxt = next(it, None) if table[name][1] and "=" not in arg else None
            if nxt is not None:
                opts.append(nxt)
        elif arg.startswith("-") and arg != "-" and not _is_text(arg):
            return list(args)
        else:
            words.append(arg)
    if not any(w.startswith("-") for w in words):
        return list(args)
    return [*opts, "--", *words]


def parse_find(args: Sequence[str]) -> dict[str, object] | None:
    """The fast path's parse of `brain find ...`, or None to let Typer handle it."""
    parsed = _parse(args, FIND_OPTIONS)
    if parsed is None or not parsed[1]:
        return None
    opts, words = parsed
    opts["query"] = words
    return opts


def run_find(
    query: Sequence[str],
    vault: str | None = None,
    limit: int | None = None,
    budget: int | None = None,
    raw: bool = False,
    terse: bool = False,
    as_json: bool = False,
) -> int:
    from brain import caller as callermod
    from brain import render, usage
    from brain.commands.find import DEFAULT_BUDGET, DEFAULT_LIMIT, find
    from brain.config import resolve_vault

    text = argv_text(" ".join(query).strip())
    budget = DEFAULT_BUDGET if budget is None else budget
    if budget < 1:
        raise UsageError("--budget must be a positive number of bytes", "pass e.g. --budget 4000")
    path = resolve_vault(vault)
    result = find(path, text, limit=DEFAULT_LIMIT if limit is None else limit)
    who = callermod.detect()
    omitted = 0
    if as_json:
        doc, omitted = render.find_json(text, result.hits, budget)
        written = render.out(doc)
    elif not result.hits:
        written = 0
        if who.person:
            sys.stderr.write(f"nothing in the vault matches {text!r}\n")
    elif raw or terse or who.agent:
        body, omitted = render.find_lines(result.hits, budget, raw=raw)
        written = render.out(body)
    else:
        markup, omitted = render.find_listing(text, result.hits, budget)
        written = render.print_rich(markup)
    shown = len(result.hits) - omitted  # what the caller actually received
    units = [usage.unit_key(h.path, h.line, h.handle) for h in result.hits[:shown]]
    usage.record("find", who.name, who.session, text, shown, written, path, units)
    return 0 if result.hits else 1


# name -> (destination, takes a value); mirrors `brain.app.prime_command`. Claude Code runs
# prime on every prompt: it must never import Typer.
PRIME_OPTIONS: dict[str, tuple[str, bool]] = {
    "--vault": ("vault", True),
    "--budget": ("budget", True),
    "--json": ("as_json", False),
}
PRIME_DEADLINE = 1.0  # seconds from the start; `BRAIN_PRIME_DEADLINE` overrides
PRIME_GRACE = 0.1  # seconds the deadline waits for output (and its log row) already under way
PRIME_STDIN_MAX = 4 * 1024 * 1024  # bytes of hook JSON read; a prompt with big pastes is cut


def parse_prime(args: Sequence[str]) -> dict[str, object] | None:
    """The fast path's parse of `brain prime [TEXT] ...`, or None to let Typer handle it."""
    parsed = _parse(args, PRIME_OPTIONS)
    if parsed is None:
        return None
    opts, words = parsed
    opts["prompt"] = words
    return opts


def run_prime(
    prompt: Sequence[str] = (),
    vault: str | None = None,
    budget: int | None = None,
    as_json: bool = False,
) -> int:
    """`brain prime`: the UserPromptSubmit hook, or by hand with the prompt as TEXT. Never in
    the way: exit 0 whatever happens (an error is a line in the state dir's `logs/prime.log`,
    and on stderr by hand), and nothing at all rather than late (PRIME_DEADLINE)."""
    from brain.commands.prime import DEFAULT_BUDGET

    if budget is None:
        budget = int(_env_number("BRAIN_PRIME_BUDGET", DEFAULT_BUDGET))
    if budget < 1:
        raise UsageError("--budget must be a positive number of tokens", "pass e.g. --budget 600")
    deadline = _STARTED + _env_number("BRAIN_PRIME_DEADLINE", PRIME_DEADLINE)
    gate = _Gate(deadline)
    by_hand = bool(prompt) or sys.stdin is None or sys.stdin.isatty()
    if by_hand and not prompt:
        raise UsageError(
            "brain prime needs the prompt",
            "pass it as text (brain prime 'TEXT') or pipe the hook JSON",
        )
    try:
        _serve_prime(prompt, vault, budget, as_json, gate)
    except Exception as exc:
        _prime_failed(exc, loud=by_hand)
    return 0


def _env_number(name: str, default: float) -> float:
    """A number from the environment, or `default` when it is unset or not a positive number."""
    try:
        value = float(os.environ.get(name, ""))
    except ValueError:
        return default
    return value if 0 < value < math.inf else default


class _Gate:
    """The prime deadline: at `deadline` a watchdog thread ends the process (exit 0) unless output
    is being written, which it waits for at most PRIME_GRACE. A thread, not a signal: a hung
    socket or SQLite's busy wait would hold a signal handler back."""

    def __init__(self, deadline: float) -> None:
        import threading

        self.lock = threading.Lock()
        left = max(0.0, deadline - time.monotonic())
        self.deadline = deadline
        timer = threading.Timer(left, self._fire)
        timer.daemon = True
        timer.start()

    def left(self) -> float:
        return self.deadline - time.monotonic()

    def _fire(self) -> None:
        self.lock.acquire(timeout=PRIME_GRACE)
        sys.stdout.flush()
        os._exit(0)


def _serve_prime(
    prompt: Sequence[str], vault: str | None, budget: int, as_json: bool, gate: _Gate
) -> None:
    from brain import caller as callermod
    from brain import render, usage
    from brain.commands import prime as primemod
    from brain.config import resolve_vault

    who = callermod.detect()
    hook = None if prompt else _read_prime_event(gate)
    if prompt:
        text = argv_text(" ".join(prompt))
    elif hook is None:
        return
    else:
        text = str(hook.get("prompt", ""))
    session = str(hook.get("session_id") or "") if hook else ""
    session = session or who.session
    name = who.name
    if hook and "hook_event_name" in hook and name in ("script", "person"):
        name = "claude-code"
    path = resolve_vault(vault)
    if not _index_ready(path):
        return
    result = primemod.prime(path, text, session=session, neighbours=_warm(path, gate))
    cap = budget * primemod.BYTES_PER_TOKEN
    body, shown = render.prime_text(result.hits, cap, hint=result.hint)
    units = [usage.unit_key(h.path, h.line, h.handle) for h in result.hits[:shown]]
    with gate.lock:  # the output and its log row together, or (past the deadline) neither
        if gate.left() <= 0:
            return
        if as_json:
            written = render.out(render.prime_json(result, session, body, shown))
        else:
            written = render.out(body) if body else 0
        if body:
            query = result.query if shown else usage.HINT_QUERY
            usage.record("prime", name, session, query, shown, written, path, units)
    if not body and not as_json and who.person:
        sys.stderr.write("brain: nothing in the vault stands out for this prompt\n")


def _read_prime_event(gate: _Gate) -> dict[str, object] | None:
    """The hook's JSON event from stdin (read until it closes or the deadline), or, when stdin
    holds plain text, that text as the prompt; None when there is nothing to read."""
    import json

    data = b""
    fd = sys.stdin.fileno()
    if os.name == "posix":
        import select

        while len(data) < PRIME_STDIN_MAX:
            ready, _, _ = select.select([fd], [], [], max(0.0, gate.left()))
            if not ready:
                return None  # the deadline passed with stdin still open
            chunk = os.read(fd, 65536)
            if not chunk:
                break
            data += chunk
    else:  # no select on Windows pipes: Claude Code closes stdin after the event
        data = os.read(fd, PRIME_STDIN_MAX)
    raw = data.decode("utf-8", errors="replace")
    try:
        doc = json.loads(raw)
    except ValueError:
        return {"prompt": raw} if raw.strip() else None
    if not isinstance(doc, dict):
        return None
    prompt = doc.get("prompt")
    return {**doc, "prompt": prompt if isinstance(prompt, str) else ""}


def _index_ready(vault: Path) -> bool:
    """Whether the index can answer now. A missing or unusable one is rebuilt by a `brain
    reindex` started in the background, never on the prompt's time."""
    from brain import index

    if index.usable(vault):
        return True
    if not vault.is_dir():
        from brain.errors import BrainError

        raise BrainError(f"the vault {vault} does not exist", "run `brain install`")
    import subprocess

    from brain.config import python_command

    subprocess.Popen(
        python_command("brain", "reindex", "--vault", str(vault)),
        stdin=subprocess.DEVNULL,
        stdout=subprocess.DEVNULL,
        stderr=subprocess.DEVNULL,
        start_new_session=True,
        close_fds=True,
    )
    return False


def _warm(vault: Path, gate: _Gate) -> Callable[[Any, str], list[tuple[int, float]] | None] | None:
    """The vector half as prime may have it: from a warm worker only. A cold one is started in
    the background (worker.ask does) and this prompt gets keywords; no model is ever loaded here."""
    from brain import semantic

    if semantic.embed_settings()[0] == "none" or os.environ.get("BRAIN_WORKER", "1") == "0":
        return None

    def ask(conn: Any, text: str) -> list[tuple[int, float]] | None:
        from brain import search, worker

        wait = gate.left() - 0.15  # kept for ranking, rendering and the log row
        if wait < worker.DEADLINE:
            return None
        query = search.vector_query(conn, text)
        return worker.ask(vault, query, search.VECTOR_DEPTH, answer_seconds=wait).hits

    return ask


def _prime_failed(exc: BaseException, *, loud: bool) -> None:
    """One line in the state dir's logs/prime.log (and on stderr by hand); never raises."""
    from brain.text import visible

    line = f"{type(exc).__name__}: {exc}"
    try:
        from brain.config import state_dir

        folder = state_dir() / "logs"
        folder.mkdir(parents=True, exist_ok=True)
        fd = os.open(folder / "prime.log", os.O_WRONLY | os.O_CREAT | os.O_APPEND, 0o600)
        with os.fdopen(fd, "a", encoding="utf-8", errors="backslashreplace") as fh:
            fh.write(f"{time.strftime('%Y-%m-%dT%H:%M:%S')} {visible(line)}\n")
    except Exception:  # noqa: S110 - the log is a courtesy; prime stays out of the way
        pass
    if loud:
        sys.stderr.write(f"brain: prime: {visible(line)}\n")


# name -> (destination, takes a value); mirrors `brain.app.pack_command`.
PACK_OPTIONS: dict[str, tuple[str, bool]] = {
    "--vault": ("vault", True),
    "--budget": ("budget", True),
    "--fresh": ("fresh", False),
    "--json": ("as_json", False),
}


def parse_pack(args: Sequence[str]) -> dict[str, object] | None:
    """The fast path's parse of `brain pack [PROJECT] ...`, or None to let Typer handle it."""
    parsed = _parse(args, PACK_OPTIONS)
    if parsed is None or len(parsed[1]) > 1:
        return None
    opts, words = parsed
    opts["project"] = words[0] if words else None
    return opts


# name -> (destination, takes a value); mirrors `brain.app.reindex_command`. The post-commit hook
# runs reindex after every commit: without Typer it starts ~60 ms sooner.
REINDEX_OPTIONS: dict[str, tuple[str, bool]] = {
    "--vault": ("vault", True),
    "--full": ("full", False),
    "--json": ("as_json", False),
}


def parse_reindex(args: Sequence[str]) -> dict[str, object] | None:
    parsed = _parse(args, REINDEX_OPTIONS)
    if parsed is None or parsed[1]:
        return None
    return parsed[0]


# name -> (destination, takes a value); mirrors `brain.app.propose_command`, whose LINE is a
# Markdown bullet and may start with `- ` (see `words_last`).
PROPOSE_OPTIONS: dict[str, tuple[str, bool]] = {
    "--to": ("to", True),
    "--vault": ("vault", True),
    "--json": ("as_json", False),
}


def run_reindex(
    vault: str | None = None,
    full: bool = False,
    as_json: bool = False,
    progress: Callable[[int, int], None] | None = None,
) -> int:
    from brain import render
    from brain.commands.reindex import reindex
    from brain.config import resolve_vault

    result = reindex(resolve_vault(vault), full=full, progress=progress)
    if as_json:
        doc = render.doc(result)
        doc["changed"], doc["removed"] = list(result.changed), list(result.removed)
        render.out(render.dumps(doc))
        return 0
    what = "rebuilt" if result.full else "updated"
    bullets = render.plural(result.bullet_count, "bullet")
    notes = render.plural(result.unit_count - result.bullet_count, "note paragraph")
    line = (
        f"Index {what}: {bullets} and {notes} from {render.plural(result.file_count, 'file')} "
        f"({len(result.changed)} changed, {len(result.removed)} removed)"
    )
    if result.embedded:
        line += f", {result.embedded} embedded"
    render.out(f"{line} in {result.ms:.0f} ms.")
    if result.problem_count:
        found = render.plural(result.problem_count, "problem")
        sys.stderr.write(f"{found} in the vault; run `brain lint` to see them\n")
    return 0


# name -> (destination, takes a value); mirrors `brain.app.sync_command`. Hooks start a
# background `brain sync` at every session start: without Typer it starts sooner and costs less.
SYNC_OPTIONS: dict[str, tuple[str, bool]] = {
    "--vault": ("vault", True),
    "--json": ("as_json", False),
    "--background": ("background", True),
}


def parse_sync(args: Sequence[str]) -> dict[str, object] | None:
    parsed = _parse(args, SYNC_OPTIONS)
    if parsed is None or len(parsed[1]) > 2:
        return None
    opts, words = parsed
    opts["action"], opts["url"] = [*words, None, None][:2]
    return opts


def run_sync(
    action: str | None = None,
    url: str | None = None,
    vault: str | None = None,
    as_json: bool = False,
    background: str | None = None,
) -> int:
    """`brain sync [status | connect URL | on | off]`; exit 1 when something is left waiting."""
    import dataclasses

    from brain import render
    from brain.commands import sync as cmd
    from brain.config import resolve_vault

    cmd.check_action(action, url)
    path = resolve_vault(vault)
    if action in ("status", "on", "off"):
        state = cmd.status(path) if action == "status" else cmd.switch(path, action == "on")
        render.out(render.dumps(render.doc(state)) if as_json else render.sync_status(state))
        return 0
    if action == "connect":
        result = cmd.connect(path, url or "")
    else:
        result = cmd.sync(path, mode=background or "full", background=background is not None)
    render.out(render.dumps(dataclasses.asdict(result)) if as_json else result.summary)
    calm = result.outcome in ("synced", "up-to-date", "off") or background is not None
    return 0 if calm and not result.waiting and not result.conflicts else 1


def run_pack(
    project: str | None = None,
    vault: str | None = None,
    budget: int | None = None,
    fresh: bool = False,
    as_json: bool = False,
) -> int:
    """`brain pack`: with no PROJECT it serves the repository the caller is in and never fails (a
    SessionStart hook must not), so an error there is a line on stderr and exit 0."""
    from brain.commands import pack as packmod

    event = packmod.read_hook_event() if project is None else None
    hook = event is not None and event.event == "SessionStart"
    try:
        return _serve_pack(project, vault, budget, fresh, as_json, event if hook else None)
    except UsageError:
        raise
    except BrainError as exc:
        if project is not None or as_json:
            raise
        sys.stderr.write(f"brain: {exc}\n")
        return 0
    except Exception as exc:
        if not hook:
            raise
        sys.stderr.write(f"brain: pack failed ({type(exc).__name__}); see {_crash_report(exc)}\n")
        return 0
    finally:
        if hook:  # once the pack is out: the session never waits on the receive starting
            packmod.receive_in_background(vault)


def _serve_pack(
    project: str | None,
    vault: str | None,
    budget: int | None,
    fresh: bool,
    as_json: bool,
    hook: HookEvent | None,
) -> int:
    from pathlib import Path

    from brain import caller as callermod
    from brain import render, usage
    from brain.commands import pack as packmod
    from brain.config import resolve_vault

    budget = packmod.DEFAULT_BUDGET if budget is None else budget
    if budget < 1:
        raise UsageError("--budget must be a positive number of tokens", "pass e.g. --budget 1500")
    who = callermod.detect()
    if project is None:
        root = packmod.repo_root(Path(hook.cwd if hook and hook.cwd else Path.cwd()))
        if root is None:
            if as_json:
                render.out(render.dumps(packmod.to_doc(packmod.empty("", "", budget))))
            elif who.person:
                sys.stderr.write(
                    "brain: not in a git repository; name a project: brain pack NAME\n"
                )
            return 0
        project = root.name
    project = argv_text(project, "the project name")
    path = resolve_vault(vault)
    result = packmod.pack(path, project, budget=budget, fresh=fresh)
    if hook is not None:
        written = (
            render.out(render.dumps(packmod.hook_output(result.text, hook.harness)))
            if result.text
            else 0
        )
    elif as_json:
        written = render.out(render.dumps(packmod.to_doc(result)))
    elif result.text:
        written = render.out(result.text)
    else:
        written = 0
        if who.person:
            sys.stderr.write(f"brain: the vault knows nothing about {project!r}\n")
    name = "claude-code" if hook is not None and who.name in ("script", "person") else who.name
    session = hook.session if hook is not None and hook.session else who.session
    given = (*result.bullets, *result.rules) if written else ()
    units = [usage.unit_key(b.path, b.line, b.handle) for b in given]
    usage.record("pack", name, session, project, len(given), written, path, units)
    return 0


def run_settle() -> int:
    """`brain settle`, the agents' stop hook: `{"decision": "block", "reason": ...}` on stdout
    once per session that wrote files and proposed nothing, else nothing. It exits 0 whatever
    happens (an agent must never be kept from stopping by brain's own failure): errors go to the
    state dir's logs/settle.log."""
    from brain import hook_event
    from brain.commands import settle as settlemod

    event = None
    try:
        event = hook_event.read()
        result = settlemod.settle(event)
    except Exception as exc:
        settlemod.log_error(exc)
        result = settlemod.SettleResult("", "error", "", (), ())
    if result.decision:
        from brain import render

        render.out(render.dumps(hook_event.block(result.reason)))
    try:
        settlemod.after(event, result)
    except Exception as exc:
        settlemod.log_error(exc)
    return 0


def _crash_report(exc: BaseException, args: Sequence[str] | None = None) -> str:
    """Write the traceback to a new file in the state dir's `crashes/`; returns its path. Never
    raises: it runs when something already went wrong, and argv or the error may hold bytes
    that are not UTF-8 (escaped here). Each report gets its own file, even two in one second."""
    try:
        import traceback

        from brain.config import state_dir

        argv = sys.argv[1:] if args is None else args
        body = "argv: " + " ".join(argv) + "\n" + "".join(traceback.format_exception(exc))
        data = body.encode("utf-8", "backslashreplace")
        folder = state_dir() / "crashes"
        folder.mkdir(parents=True, exist_ok=True)
        stamp = time.strftime("crash-%Y%m%d-%H%M%S")
        for n in range(1, 1000):
            path = folder / (f"{stamp}.txt" if n == 1 else f"{stamp}-{n}.txt")
            try:
                fd = os.open(path, os.O_WRONLY | os.O_CREAT | os.O_EXCL, 0o600)
            except FileExistsError:
                continue
            with os.fdopen(fd, "wb") as fh:
                fh.write(data)
            return str(path)
    except Exception:  # noqa: S110 - the report is a courtesy; the error line is still printed
        pass
    return "(the crash report could not be written)"


def _fail(message: str, *, as_json: bool) -> None:
    from brain.text import visible

    message = visible(message)  # an error may quote argv: no raw bytes or ESC on screen
    if as_json:
        from brain.render import error_json, out

        out(error_json(message))
    else:
        sys.stderr.write(f"brain: {message}\n")


def argv_text(text: str, what: str = "the query") -> str:
    """Text from the command line with bytes that are not UTF-8 (a lone surrogate each, as Python
    decodes argv) replaced by U+FFFD, after one line on stderr that says so: the rest of the text
    still counts (a query's other words are searched), and SQLite, files and stdout never see a
    surrogate."""
    from brain.text import has_surrogates, repair, undecodable

    if not has_surrogates(text):
        return text
    fixed = repair(text)
    sys.stderr.write(f"brain: {what} is not valid UTF-8 ({undecodable(text)}); read as {fixed!r}\n")
    return fixed


def parse_daily(args: list[str]) -> tuple[str | None] | None:
    """`tend --daily [--vault PATH]`, the hooks' quiet sweep, without Typer; None for any other
    form (Typer then parses it and says what is wrong)."""
    vault: str | None = None
    rest = list(args)
    while rest:
        arg = rest.pop(0)
        if arg == "--daily":
            continue
        if arg == "--vault" and rest:
            vault = rest.pop(0)
        elif arg.startswith("--vault="):
            vault = arg.split("=", 1)[1]
        else:
            return None
    return (vault,)


def run_daily(vault: str | None) -> int:
    """The daily sweep: quiet, bounded, exit 0 whatever happens (a hook starts it in the
    background). What it did, or why it could not, goes to the state dir's logs/tend.log."""
    line = ""
    try:
        from brain.commands import tend
        from brain.config import resolve_vault

        path = resolve_vault(vault)
        spent = time.monotonic() - STARTED
        result = tend.tend(path, daily=True, budget=max(0.0, tend.DAILY_SECONDS - spent))
        if not result.ran:
            return 0
        line = (
            f"{path}: {result.checked} bullets in {result.ms} ms, {len(result.applied)} applied, "
            f"{len(result.proposed)} proposed, {result.waiting_count} waiting"
            + (f", stopped early: {result.stopped}" if result.stopped else "")
        )
    except BaseException as exc:
        line = f"{vault or 'the vault'}: not swept: {type(exc).__name__}: {exc}"
    try:
        from brain.config import state_dir

        log = state_dir() / "logs" / "tend.log"
        log.parent.mkdir(parents=True, exist_ok=True)
        with log.open("a", encoding="utf-8") as fh:
            fh.write(f"{time.strftime('%Y-%m-%dT%H:%M:%S')} {line}\n")
    except OSError:
        pass
    return 0


class NotFast(Exception):
    """The arguments need Typer (`--help`, a typo): the worker leaves them to a fresh process."""


def main(argv: Sequence[str] | None = None) -> None:
    args = list(sys.argv[1:] if argv is None else argv)
    reconfigure = getattr(sys.stdout, "reconfigure", None)
    if reconfigure is not None:  # a path that is not UTF-8 is printed escaped, never a traceback
        reconfigure(errors="backslashreplace")
    code = execute(args)
    if code in (0, 1):
        _update_notice(args)
    sys.exit(code)


def execute(args: list[str], *, typer: bool = True) -> int:
    """Run one command and return its exit code: every error is a line (or a JSON object), never
    a traceback. With `typer` False, NotFast instead of anything the fast paths do not handle."""
    as_json = "--json" in args
    try:
        code = _dispatch(args, typer=typer)
    except NotFast:
        raise
    except BrainError as exc:
        _fail(str(exc), as_json=as_json)
        code = exc.exit_code
    except KeyboardInterrupt:
        sys.stderr.write("brain: interrupted\n")
        code = 130
    except BrokenPipeError:
        # the reader went away (`brain find x | head -1`): not an error worth a word
        devnull = os.open(os.devnull, os.O_WRONLY)
        os.dup2(devnull, sys.stdout.fileno())
        code = 0
    except Exception as exc:  # the last line of defence: no traceback on screen
        report = _crash_report(exc, args)
        _fail(
            f"internal error ({type(exc).__name__}: {exc}); details in {report}; please report it",
            as_json=as_json,
        )
        code = 3
    return code


def _update_notice(args: list[str]) -> None:
    """After the output, at a terminal only: the daily release check and its notice (stderr)."""
    if os.environ.get("BRAIN_NO_UPDATE") or not sys.stderr.isatty():
        return  # agents, hooks and pipes never pay for the import
    from brain import notice

    notice.after_command(args)


def _dispatch(args: list[str], *, typer: bool = True) -> int:
    if args[:1] == ["merge-driver"] and len(args) == 5:  # git runs it per file merged: no Typer
        from pathlib import Path

        from brain import merge

        return merge.driver(Path(args[1]), Path(args[2]), Path(args[3]), args[4])
    if args[:1] == ["find"]:
        opts = parse_find(args[1:])
        if opts is not None:
            return run_find(**opts)  # type: ignore[arg-type]
    if args[:1] == ["prime"]:
        opts = parse_prime(args[1:])
        if opts is not None:
            return run_prime(**opts)  # type: ignore[arg-type]
    if args[:1] == ["pack"]:
        opts = parse_pack(args[1:])
        if opts is not None:
            return run_pack(**opts)  # type: ignore[arg-type]
    if args[:1] == ["sync"]:
        opts = parse_sync(args[1:])
        if opts is not None:
            return run_sync(**opts)  # type: ignore[arg-type]
    if args == ["settle"]:  # the stop hook, at every stop: no Typer
        return run_settle()
    # At a terminal reindex goes through Typer, which draws the progress bar of a long embedding.
    if args[:1] == ["reindex"] and not sys.stderr.isatty():
        opts = parse_reindex(args[1:])
        if opts is not None:
            return run_reindex(**opts)  # type: ignore[arg-type]
    if args[:1] == ["tend"] and "--daily" in args:
        daily = parse_daily(args[1:])
        if daily is not None:
            return run_daily(daily[0])
    if args[:1] == ["propose"]:
        args = ["propose", *words_last(args[1:], PROPOSE_OPTIONS)]
    if not typer:
        raise NotFast
    from brain.app import run

    return run(args)
