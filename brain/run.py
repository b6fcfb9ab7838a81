"""The runners, the one glue from parsed arguments to a command: `run_NAME` for every command
and subcommand brain.options declares (run_find, run_inbox_approve) takes its options as keyword
arguments, calls the command (asking a person what it must, as install's `git init`) and hands
its result to the presenter (brain.present), returning the exit code. The fast path (brain.cli)
and the Typer app (brain.app) call the same runner.
Standard library only at module level: `brain find` starts here.
"""

from __future__ import annotations

import math
import sys
import time
from collections.abc import Callable, Iterator, Sequence
from contextlib import AbstractContextManager, contextmanager, nullcontext
from pathlib import Path
from typing import TYPE_CHECKING, Any

from brain.answers import argv_text, find_within, pack_for
from brain.crash import crash_report, log_line
from brain.deadline import PRIME_DEADLINE, Gate, process_gate
from brain.errors import BrainError, UsageError
from brain.settings import current
from brain.stdin import PRIME_STDIN_MAX, read_stdin
from brain.wire import DEADLINE

if TYPE_CHECKING:
    from brain import search
    from brain.hook_event import Event

# imported by brain.cli at its start: the daily sweep's budget and prime's deadline count from here
STARTED = time.monotonic()


def run_find(
    query: Sequence[str],
    vault: str | None = None,
    limit: int | None = None,
    ranked: bool = False,
    budget: int | None = None,
    raw: bool = False,
    terse: bool = False,
    as_json: bool = False,
) -> int:
    from brain import caller
    from brain.present import emit, hits

    text = argv_text(" ".join(query).strip())
    with _worker_held():
        result, budget, path = find_within(vault, text, limit, budget, ranked=ranked)
        answer = hits.find(
            result, caller.detect(), path, budget=budget, raw=raw, terse=terse, as_json=as_json
        )
        return emit(answer)


def _worker_held() -> AbstractContextManager[None]:
    """worker_client.starts_held: a worker the find starts, once it has answered. Not for a find
    by keywords alone (BRAIN_EMBED=none, or `embed: none` in brain.yaml), which starts none and
    spares the import (socket)."""
    from brain import semantic

    if semantic.embed_settings()[0] == "none":
        return nullcontext()
    from brain import worker_client

    return worker_client.starts_held()


def run_prime(
    prompt: Sequence[str] = (),
    vault: str | None = None,
    budget: int | None = None,
    as_json: bool = False,
) -> int:
    """`brain prime`: the UserPromptSubmit hook, or by hand with the prompt as TEXT. Never in
    the way: exit 0 whatever happens (an error is a line in the state dir's `logs/prime.log`,
    and on stderr by hand), and nothing at all rather than late (brain.PRIME_DEADLINE). With
    stdin closed and no TEXT there is no prompt and nobody to tell: nothing, exit 0."""
    gate = prime_gate()  # first: what follows imports, and the deadline is watched meanwhile
    stdin = _stdin_kind()
    if not prompt and stdin == "closed":
        return 0
    by_hand = bool(prompt) or stdin == "terminal"
    late = current().prime_seconds(PRIME_DEADLINE)[1]
    if late:  # the gate keeps the default deadline; the line says why
        _prime_failed(BrainError(late), loud=by_hand)
    if budget is None:
        from brain.commands.prime import DEFAULT_BUDGET

        try:
            budget = int(current().prime_budget(DEFAULT_BUDGET))
        except BrainError as exc:  # said (logged), and the prompt served within the default
            _prime_failed(exc, loud=by_hand)
            budget = DEFAULT_BUDGET
    if budget < 1:
        raise UsageError("--budget must be a positive number of tokens", "pass e.g. --budget 600")
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


def _stdin_kind() -> str:
    """ "terminal", "closed" (no stdin at all: `<&-`, or in the worker a client whose stdin is
    closed) or "piped" (a hook's pipe, a file, /dev/null)."""
    try:
        if sys.stdin is None:
            return "closed"
        return "terminal" if sys.stdin.isatty() else "piped"
    except (AttributeError, OSError, ValueError):
        return "closed"


# Prime's deadline: in a process of its own, counted from its start (brain.deadline.STARTED), the
# gate the thin client made first thing; brain.worker swaps in one with no watchdog, counted from
# its client's start.
prime_gate: Callable[[], Gate] = process_gate


def _serve_prime(
    prompt: Sequence[str], vault: str | None, budget: int, as_json: bool, gate: Gate
) -> None:
    from brain import caller as callermod
    from brain.commands import prime as primemod
    from brain.config import resolve_vault
    from brain.present import emit, hits

    hook = None if prompt else _read_prime_event(gate)
    if prompt:
        text = argv_text(" ".join(prompt))
    elif hook is None:
        return _hook_ran("prime", "", "", "nothing: no prompt event on stdin")
    else:
        text = str(hook.get("prompt", ""))
    from brain import hook_event

    event = hook_event.parse(hook) if hook else None
    if event is not None and event.kind != "prompt":
        event = None  # plain text, or JSON that is no agent's prompt event
    harness = event.harness if event else ""
    if event is not None and harness in hook_event.NO_PROMPT_CONTEXT:
        # the program reads no context from its prompt hook: nothing to serve
        return _hook_ran("prime", harness, event.session, "nothing: it reads no prompt context")
    who = callermod.detect(harness)
    session = (event.session if event else "") or who.session
    path = resolve_vault(vault)
    if not _index_ready(path):
        if hook is not None:
            _hook_ran("prime", harness, session, "nothing: the index is being rebuilt")
        return None
    result = primemod.prime(path, text, session=session, neighbours=_warm(path, gate))
    from brain.vocab import BYTES_PER_TOKEN

    cap = budget * BYTES_PER_TOKEN
    form = (event.harness, event.name) if event else None
    answer = hits.prime(
        result, who.name, session, path, cap, as_json=as_json, person=who.person, hook=form
    )
    with gate.lock:  # the output and its log row together, or (at the deadline) neither
        if not gate.open():
            if hook is not None:
                _hook_ran("prime", harness, session, "nothing: past the deadline")
            return None
        emit(answer)
    return None


def _hook_ran(hook: str, harness: str, session: str, what: str) -> None:
    """The hooks' log line of a run that ends before it answers (one that answers writes its
    own as it prints: brain.present.emit)."""
    from brain.crash import HOOKS_LOG, hook_run, log_text

    log_text(HOOKS_LOG, hook_run(hook, harness, session, what))


def _read_prime_event(gate: Gate) -> dict[str, object] | None:
    """The hook's JSON event from stdin (read until it closes or the deadline), or, when stdin
    holds plain text, that text as the prompt; None when there is nothing to read."""
    import json

    data, whole = read_stdin(sys.stdin.fileno(), PRIME_STDIN_MAX, math.inf, gate.deadline)
    if not whole:
        return None  # the deadline passed with stdin still open
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
    from brain.config import python_command
    from brain.process import start_detached

    start_detached(python_command("brain", "reindex", "--vault", str(vault)))
    return False


def _warm(vault: Path, gate: Gate) -> Callable[[Any, str], search.Near | None] | None:
    """The vector half as prime may have it: from a warm worker only. A cold one is started in
    the background (worker_client.ask does) and this prompt gets keywords; no model is ever
    loaded here."""
    from brain import semantic

    if semantic.embed_settings()[0] == "none" or not current().worker:
        return None

    def ask(conn: Any, text: str) -> search.Near | None:
        from brain import search, worker_client

        wait = gate.left() - 0.15  # kept for ranking, rendering and the log row
        if wait < DEADLINE:
            return None
        query = search.vector_query(conn, text)
        said = worker_client.ask(vault, query, search.VECTOR_DEPTH, answer_seconds=wait)
        return None if said.hits is None else search.Near(said.hits, said.general)

    return ask


def _prime_failed(exc: BaseException, *, loud: bool) -> None:
    """One line in the state dir's logs/prime.log (and on stderr by hand); never raises."""
    line = log_line("prime", exc)
    if loud:
        from brain.present import err

        err(f"brain: prime: {line}")


def run_reindex(vault: str | None = None, full: bool = False, as_json: bool = False) -> int:
    from brain.commands.reindex import reindex
    from brain.config import resolve_vault
    from brain.present import emit
    from brain.present import sync as present

    with progress_bar("Embedding", enabled=not as_json) as progress:
        result = reindex(resolve_vault(vault), full=full, progress=progress)
    return emit(present.reindex(result, as_json=as_json))


@contextmanager
def progress_bar(label: str, *, enabled: bool) -> Iterator[Callable[[int, int], None] | None]:
    """A progress bar on stderr for long runs at a terminal; nothing for hooks and pipes (which
    never pay for importing rich)."""
    if not (enabled and sys.stderr.isatty()):
        yield None
        return
    from rich.console import Console
    from rich.progress import Progress

    from brain.present import colour_options

    with Progress(transient=True, console=Console(stderr=True, **colour_options())) as bar:
        task = bar.add_task(label, total=None)

        def update(done: int, total: int) -> None:
            if total >= 200:
                bar.update(task, completed=done, total=total)

        yield update


def run_sync(
    action: str | None = None,
    url: str | None = None,
    vault: str | None = None,
    as_json: bool = False,
    background: str | None = None,
) -> int:
    """`brain sync [status | connect URL | follow | on | off]`; exit 1 when something is left
    waiting."""
    from brain.commands import sync as cmd
    from brain.config import resolve_vault
    from brain.present import emit
    from brain.present import sync as present

    cmd.check_action(action, url)
    path = resolve_vault(vault)
    if action in ("status", "on", "off"):
        state = cmd.status(path) if action == "status" else cmd.switch(path, action == "on")
        return emit(present.sync_status(state, as_json=as_json))
    if action == "connect":
        result = cmd.connect(path, url or "")
    else:
        result = cmd.sync(
            path,
            mode=background or "full",
            background=background is not None,
            follow=action == "follow",
        )
    return emit(present.sync(result, as_json=as_json, background=background is not None))


def run_pack(
    project: str | None = None,
    vault: str | None = None,
    budget: int | None = None,
    fresh: bool = False,
    as_json: bool = False,
) -> int:
    """`brain pack`: with no PROJECT it serves the repository the caller is in and never fails. As
    a session-start hook (an agent's start event on stdin) it answers in that program's form,
    once per moment (brain.commands.pack.first_of_moment), outside a repository too (the working
    rules), nothing when the session is resumed (Copilot CLI's start has no matcher to leave
    resume out), and nothing on stderr (Gemini CLI shows a hook's stderr, and reads an exit
    code other than 0 and 1 as a denial: packages/core/src/hooks/hookRunner.ts): an error is a
    line in the state dir's logs/pack.log and exit 0. By hand, an error is a line on stderr."""
    from brain import hook_event
    from brain.commands import pack as packmod

    event = hook_event.read() if project is None else None
    hook = event if event is not None and event.kind == "start" else None
    if hook is not None and hook.source in packmod.RESUMED:
        packmod.receive_in_background(vault)
        # the resumed conversation holds the pack it started with
        _hook_ran("pack", hook.harness, hook.session, "nothing: a resumed session has its pack")
        return 0
    if hook is not None and not packmod.first_of_moment(hook):
        # another run of this very start answered it (VS Code runs every config's)
        _hook_ran("pack", hook.harness, hook.session, "nothing: another run of this start answered")
        return 0
    try:
        return _serve_pack(project, vault, budget, fresh, as_json, hook)
    except UsageError:
        raise
    except BrainError as exc:
        if project is not None or as_json:
            raise
        if hook is not None:
            log_line("pack", exc)
            return 0
        from brain.present import err

        err(f"brain: {exc}")
        return 0
    except Exception as exc:
        if hook is None:
            raise
        log_line("pack", RuntimeError(f"{type(exc).__name__}; see {crash_report(exc)}"))
        return 0
    finally:
        if hook is not None:  # once the pack is out: the session never waits on the receive
            packmod.receive_in_background(vault)


def _serve_pack(
    project: str | None,
    vault: str | None,
    budget: int | None,
    fresh: bool,
    as_json: bool,
    hook: Event | None,
) -> int:
    from brain import caller as callermod
    from brain.present import Answer, emit, json_text
    from brain.present import pack as present

    who = callermod.detect(hook.harness if hook else "")
    cwd = Path(hook.cwd if hook and hook.cwd else current().cwd)
    found = pack_for(project, vault, budget, fresh=fresh, cwd=cwd, outside=hook is not None)
    if found.result is None:
        if as_json:
            return emit(Answer(json_text(found.empty)))
        note = "brain: not in a git repository; name a project: brain pack NAME"
        return emit(Answer(note=note if who.person else ""))
    answer = present.pack(found.result, who, found.vault, found.project, as_json=as_json, hook=hook)
    return emit(answer)


def run_settle(vault: str | None = None) -> int:
    """`brain settle`, the agents' stop hook: `{"decision": "block", "reason": ...}` on stdout
    once per session that wrote files and proposed nothing, else nothing; a stop that passes
    sends `vault` (else the one BRAIN_VAULT or the record names) and starts its daily sweep. It
    exits 0 whatever happens (an agent must never be kept from stopping by brain's own failure):
    errors go to the state dir's logs/settle.log."""
    from brain import hook_event
    from brain.commands import settle as settlemod

    event = None
    try:
        event = hook_event.read()
        result = settlemod.settle(event)
    except Exception as exc:
        settlemod.log_error(exc)
        result = settlemod.SettleResult("", "error", "", (), ())
    if result.decision and event is not None:
        from brain.present import dumps, out

        out(dumps(hook_event.block(result.reason, event.harness)))
    try:
        settlemod.after(event, result, vault)
    except Exception as exc:
        settlemod.log_error(exc)
    return 0


def run_tend(
    dry_run: bool = False,
    daily: bool = False,
    quick: bool = False,
    vault: str | None = None,
    as_json: bool = False,
) -> int:
    """`brain tend`: the daily sweep (run_daily) with --daily alone, else a sweep and its report."""
    if daily and not dry_run and not as_json:
        return run_daily(vault)
    from brain.commands import tend
    from brain.config import resolve_vault
    from brain.present import emit, upkeep

    budget = tend.daily_seconds() if daily or quick else None
    result = tend.tend(
        resolve_vault(vault), dry_run=dry_run, daily=daily, quick=quick, budget=budget
    )
    return emit(upkeep.tend(result, as_json=as_json))


def run_propose(
    line: list[str],
    to: str | None = None,
    force: bool = False,
    pr: bool = False,
    vault: str | None = None,
    as_json: bool = False,
) -> int:
    from brain.commands.propose import propose
    from brain.config import resolve_vault
    from brain.present import emit
    from brain.present import inbox as present

    result = propose(resolve_vault(vault), " ".join(line), to=to, force=force, pr=pr)
    return emit(present.propose(result, as_json=as_json))


def run_daily(vault: str | None) -> int:
    """The daily sweep: quiet, bounded, exit 0 whatever happens (a hook starts it in the
    background). What it did, or why it could not, goes to the state dir's logs/tend.log."""
    line = ""
    try:
        from brain.commands import tend
        from brain.config import resolve_vault
        from brain.text import plural

        path = resolve_vault(vault)
        spent = time.monotonic() - STARTED
        result = tend.tend(path, daily=True, budget=max(0.0, tend.daily_seconds() - spent))
        if not result.ran and not result.stopped:
            return 0  # swept today already, or another sweep holds the lock
        line = (
            f"{path}: {plural(result.checked, 'bullet')} in {result.ms} ms, "
            f"{len(result.applied)} applied, "
            f"{len(result.proposed)} proposed, {result.waiting_count} waiting"
            + (f", stopped early: {result.stopped}" if result.stopped else "")
            if result.ran
            else f"{path}: not swept: {result.stopped}"  # off (BRAIN_NO_TEND)
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


# --- recall, and what past sessions did (howto, lessons, day, week) ----------------------------


def run_recall_search(
    query: list[str],
    *,
    all_sessions: bool,
    limit: int,
    since: str | None,
    agent: str | None,
    cwd: str | None,
    as_json: bool,
) -> int:
    from brain.commands import recall as cmd

    text = argv_text(" ".join(query).strip())
    cmd.mode_of(text)  # an empty QUERY: the usage error that names recall's modes
    return _turns(False, text, all_sessions, limit, (since, agent, cwd), as_json)


def run_recall_sessions(
    query: list[str] | None,
    *,
    all_sessions: bool,
    limit: int,
    since: str | None,
    agent: str | None,
    cwd: str | None,
    as_json: bool,
) -> int:
    text = argv_text(" ".join(query or []).strip())
    return _turns(True, text, all_sessions, limit, (since, agent, cwd), as_json)


def _turns(
    sessions: bool,
    text: str,
    all_sessions: bool,
    limit: int,
    where: tuple[str | None, str | None, str | None],
    as_json: bool,
) -> int:
    """`recall search` (the turns that match `text`) or `recall sessions` (their sessions, or
    the newest without `text`), within the filters `where` (since, agent, cwd), each of which
    is no filter when None."""
    from brain import caller
    from brain.commands import recall as cmd
    from brain.present import emit
    from brain.present import recall as present

    who = caller.detect()
    since, agent, cwd = (w or "" for w in where)
    find: Callable[..., cmd.RecallResult | cmd.SessionsResult] = (
        cmd.sessions if sessions else cmd.recall
    )
    with progress_bar("Reading transcripts", enabled=not as_json) as bar:
        result = find(
            text,
            limit=limit,
            since=since,
            agent=agent,
            cwd=cwd,
            exclude_session="" if all_sessions else who.session,
            progress=bar,
        )
    if isinstance(result, cmd.SessionsResult):
        return emit(present.sessions(result, who, as_json=as_json))
    return emit(present.recall(result, who, text, as_json=as_json))


def run_recall_full(turn: str, *, as_json: bool) -> int:
    from brain.commands import recall as cmd
    from brain.present import emit
    from brain.present import recall as present

    return emit(present.full(cmd.full(argv_text(turn, "the turn id")), as_json=as_json))


def run_recall_sync(*, as_json: bool) -> int:
    from brain.commands import recall as cmd
    from brain.present import emit
    from brain.present import recall as present

    with progress_bar("Reading transcripts", enabled=not as_json) as bar:
        report = cmd.sync(full=True, progress=bar)
    return emit(present.sync(report, as_json=as_json))


def run_recall_sources(*, as_json: bool) -> int:
    from brain.commands import recall as cmd
    from brain.present import emit
    from brain.present import recall as present

    return emit(present.sources(cmd.sources(), as_json=as_json))


def run_recall_enable(agent: str, *, as_json: bool) -> int:
    return _toggle(agent, True, as_json)


def run_recall_disable(agent: str, *, as_json: bool) -> int:
    return _toggle(agent, False, as_json)


def _toggle(agent: str, on: bool, as_json: bool) -> int:
    from brain.commands import recall as cmd
    from brain.present import emit
    from brain.present import recall as present

    return emit(present.toggle(cmd.toggle(agent, on), as_json=as_json))


# Their arguments as brain.options declares them (the Typer commands pass them all): an option
# not given is None, and an empty text is "no filter" to the commands.


def run_howto(
    terms: list[str],
    *,
    limit: int,
    failed: bool,
    since: str | None,
    agent: str | None,
    cwd: str | None,
    propose: bool,
    to: str | None,
    vault: str | None,
    as_json: bool,
) -> int:
    from brain import caller
    from brain.commands.howto import howto
    from brain.config import resolve_vault
    from brain.present import emit
    from brain.present import past as hr

    text = " ".join(terms).strip()
    result = howto(
        text,
        limit=limit,
        failed=failed,
        since=since or "",
        agent=agent or "",
        cwd=cwd or "",
        propose_to=resolve_vault(vault) if propose else None,
        to=to,
    )
    return emit(hr.howto(result, caller.detect(), text, as_json=as_json))


def run_lessons(
    *,
    since: str,
    kind: str | None,
    agent: str | None,
    propose: bool,
    vault: str | None,
    as_json: bool,
) -> int:
    from brain import caller
    from brain.commands.lessons import find_lessons
    from brain.config import resolve_vault
    from brain.present import emit
    from brain.present import past as hr

    result = find_lessons(
        since=since,
        kind=kind or "",
        agent=agent or "",
        propose_to=resolve_vault(vault) if propose else None,
    )
    return emit(hr.lessons(result, caller.detect(), as_json=as_json))


def run_day(
    day: str | None, *, no_git: bool, project: str | None, agent: str | None, as_json: bool
) -> int:
    from brain import caller
    from brain.commands import day as daymod
    from brain.present import emit
    from brain.present import past as hr

    result = daymod.day(day or "", git=not no_git, project=project or "", agent=agent or "")
    return emit(hr.day(result, caller.detect(), as_json=as_json))


def run_week(
    *, since: str, no_git: bool, project: str | None, agent: str | None, as_json: bool
) -> int:
    from brain import caller
    from brain.commands import day as daymod
    from brain.present import emit
    from brain.present import past as hr

    result = daymod.week(since, git=not no_git, project=project or "", agent=agent or "")
    return emit(hr.week(result, caller.detect(), as_json=as_json))


# --- checks and upkeep: lint, secrets, verify, doctor, log, ledger, learn ---------------------


def run_lint(
    paths: list[str] | None, *, staged: bool, strict: bool, vault: str | None, as_json: bool
) -> int:
    from brain.config import resolve_vault
    from brain.lint import lint
    from brain.present import checks, emit

    result = lint(resolve_vault(vault), paths or None, staged=staged, strict=strict or None)
    return emit(checks.lint(result, as_json=as_json))


def run_secrets(
    paths: list[str] | None,
    *,
    staged: bool,
    history: bool,
    outgoing: bool,
    vault: str | None,
    as_json: bool,
) -> int:
    """`brain secrets`: the files (or what is staged), or with --history or --outgoing commits."""
    from brain.config import resolve_vault
    from brain.present import checks, emit

    if history and outgoing:
        raise UsageError(
            "--history and --outgoing are two scans: give one", "brain secrets --outgoing"
        )
    if history or outgoing:
        flag = "--history" if history else "--outgoing"
        if staged or paths:
            raise UsageError(
                f"{flag} reads commits: it takes no PATHS and no --staged", f"brain secrets {flag}"
            )
        from brain.commands import secrets as cmd

        path = resolve_vault(vault)
        if outgoing:
            return emit(checks.secrets_outgoing(cmd.outgoing(path), as_json=as_json))
        return emit(checks.secrets_history(cmd.history(path), as_json=as_json))
    from brain.secrets_scan import scan

    result = scan(resolve_vault(vault), paths or None, staged=staged)
    return emit(checks.secrets(result, as_json=as_json))


def run_verify(handles: list[str] | None, *, apply: bool, vault: str | None, as_json: bool) -> int:
    from brain.commands.verify import verify
    from brain.config import resolve_vault
    from brain.present import emit, upkeep

    asked = [argv_text(h, "the handle") for h in handles or []]
    return emit(upkeep.verify(verify(resolve_vault(vault), asked, apply=apply), as_json=as_json))


def run_doctor(*, vault: str | None, as_json: bool) -> int:
    from brain.commands.doctor import doctor
    from brain.present import emit, upkeep

    return emit(upkeep.doctor(doctor(vault), as_json=as_json))


def run_log(*, vault: str | None, since: str | None, as_json: bool) -> int:
    from brain.commands.log import log
    from brain.config import resolve_vault
    from brain.present import emit, upkeep

    return emit(upkeep.log(log(resolve_vault(vault), since=since or ""), as_json=as_json))


def run_ledger(*, vault: str | None, since: str | None, caller: str | None, as_json: bool) -> int:
    from brain.commands.ledger import ledger
    from brain.config import resolve_vault
    from brain.present import emit, upkeep

    result = ledger(resolve_vault(vault), since=since or "", caller=caller or "")
    return emit(upkeep.ledger(result, as_json=as_json, chart=sys.stdout.isatty()))


def run_learn(*, apply: bool, vault: str | None, as_json: bool) -> int:
    from brain.commands.learn import learn
    from brain.config import resolve_vault
    from brain.present import emit, upkeep

    return emit(upkeep.learn(learn(resolve_vault(vault), apply=apply), as_json=as_json))


def run_review(mode: str | None, *, vault: str | None, as_json: bool) -> int:
    from brain.commands.review import review
    from brain.config import resolve_vault
    from brain.present import emit, upkeep

    return emit(upkeep.review(review(resolve_vault(vault), mode), as_json=as_json))


def run_locate(handle: list[str] | None, *, vault: str | None, as_json: bool) -> int:
    """`brain locate HANDLE`: where the bullet lives; with no HANDLE the vault's folder."""
    from brain.commands.locate import locate, where
    from brain.config import resolve_vault
    from brain.present import emit, transfer

    if not handle:
        return emit(transfer.vault_found(where(vault), as_json=as_json))
    result = locate(resolve_vault(vault), argv_text(" ".join(handle), "the handle"))
    return emit(transfer.locate(result, as_json=as_json))


# --- setting up: hooks, uninstall, update ------------------------------------------------------


def run_hooks(action: str | None, *, harness: str | None, as_json: bool) -> int:
    """`brain hooks [on | off | status]`; status when no ACTION is given."""
    from brain.commands import hooks as cmd
    from brain.present import emit, setup

    action = action or "status"
    if action not in ("on", "off", "status"):
        raise UsageError(f"{action!r} is not on, off or status", "brain hooks on")
    if action == "status":
        return emit(setup.hooks_status(cmd.status(harness), as_json=as_json))
    return emit(setup.hooks(cmd.switch(action == "on", harness), as_json=as_json))


def run_version(*, as_json: bool) -> int:
    from brain.commands.version import version
    from brain.present import emit, setup

    return emit(setup.version(version(), as_json=as_json))


def run_uninstall(*, as_json: bool) -> int:
    from brain.commands.install import uninstall
    from brain.present import emit, setup

    return emit(setup.uninstall(uninstall(), as_json=as_json))


def run_update(*, rollback: bool, check: bool, as_json: bool) -> int:
    from brain.commands.update import rollback as do_rollback
    from brain.commands.update import update
    from brain.present import emit, setup

    result = do_rollback() if rollback else update(check_only=check)
    return emit(setup.update(result, as_json=as_json))


# --- moving memories in and out: export, import ------------------------------------------------


def run_export(
    agents: list[str],
    *,
    check: bool,
    project: str | None,
    budget: int | None,
    vault: str | None,
    as_json: bool,
) -> int:
    from brain.commands.export import export
    from brain.config import resolve_vault
    from brain.present import emit, transfer

    result = export(
        resolve_vault(vault), Path.cwd(), agents, project=project, budget=budget, check=check
    )
    return emit(transfer.export(result, agents, check=check, as_json=as_json))


def run_import(
    source: str, *, memory_dir: str | None, to: str | None, vault: str | None, as_json: bool
) -> int:
    """`brain import claude` (Claude Code's memories of this repository) or a Markdown FILE."""
    from brain.commands.import_ import import_claude, import_file
    from brain.config import resolve_vault
    from brain.present import emit, transfer

    path = resolve_vault(vault)
    if source == "claude":
        result = import_claude(path, Path.cwd(), Path(memory_dir) if memory_dir else None, to=to)
    else:
        if memory_dir:
            raise UsageError("--dir goes with `brain import claude`", f"brain import {source}")
        result = import_file(path, Path(source), to=to)
    return emit(transfer.import_(result, as_json=as_json))


# --- the inbox ---------------------------------------------------------------------------------


def run_inbox(*, vault: str | None, as_json: bool) -> int:
    from brain.commands import inbox
    from brain.config import resolve_vault
    from brain.present import emit
    from brain.present import inbox as present

    return emit(present.inbox(inbox.inbox(resolve_vault(vault)), as_json=as_json))


def run_inbox_approve(
    numbers: list[str], *, to: str | None, vault: str | None, as_json: bool
) -> int:
    from brain.commands import inbox
    from brain.config import resolve_vault
    from brain.present import emit
    from brain.present import inbox as present

    results = inbox.approve_many(resolve_vault(vault), numbers, to)
    return emit(present.approved(results, one=_one_number(numbers), as_json=as_json))


def run_inbox_drop(numbers: list[str], *, vault: str | None, as_json: bool) -> int:
    from brain.commands import inbox
    from brain.config import resolve_vault
    from brain.present import emit
    from brain.present import inbox as present

    results = inbox.drop_many(resolve_vault(vault), numbers)
    return emit(present.dropped(results, one=_one_number(numbers), as_json=as_json))


def _one_number(words: list[str]) -> bool:
    """`approve 3`, answered as before; several, a range or all get a list."""
    return len(words) == 1 and words[0].isdecimal()


# --- setting up: install, and the servers (desk, mcp) ------------------------------------------


def run_install(
    path: str | None,
    *,
    init: bool,
    yes: bool,
    vault: str | None,
    dry_run: bool,
    as_json: bool,
) -> int:
    """`brain install`: a folder that is not a git repository yet is `git init`ed with --init
    (or --yes), or when a person at a terminal says so; refused otherwise."""
    from brain.commands.install import choose_vault, install, plan
    from brain.present import emit, setup

    if path and vault and Path(path).expanduser().resolve() != Path(vault).expanduser().resolve():
        raise UsageError(
            f"PATH {path} and --vault {vault} name two vaults", f"brain install {path}"
        )
    init = init or yes
    choice = choose_vault(path or vault)
    if dry_run:
        return emit(setup.install_plan(plan(choice, init=init), as_json=as_json))
    if choice.needs_init and not init and not as_json and sys.stdin.isatty():
        init = _confirm(
            f"{choice.path} is not a git repository. Run `git init` there and use it as the vault?"
        )
        if not init:
            raise BrainError("nothing was installed", "pick another folder, or pass --init")
    return emit(setup.install(install(choice, init=init), as_json=as_json))


def _confirm(question: str) -> bool:
    """A person's yes or no on stderr, no by default: Click's prompt (the one Typer gives), which
    asks again on any other answer. End of input is Click's Abort, which brain.app.run turns into
    an interruption (exit 130, `brain: interrupted`): install is never served without Typer."""
    import typer

    return typer.confirm(question, default=False, err=True)


def run_desk(*, vault: str | None, port: int, no_open: bool, idle: float) -> int:
    """`brain desk`: serve the desk until it is idle for `idle` seconds, Ctrl-C or a hang-up."""
    from brain import present
    from brain.config import resolve_vault

    path = resolve_vault(vault)
    if not 0 <= port <= 65535:
        raise UsageError(f"--port {port} is not a port", "pass 1 to 65535, or leave it out")
    from brain.desk import door, server

    sock = server.bind(port)
    desk = server.Desk(path, sock.getsockname()[1])
    # The browser is given a file holding the token (0600), never the URL: a child's argv is
    # every local user's to read. The token is printed only when the person must carry the URL
    # to a browser themselves (--no-open, no terminal, no browser found; an ssh tunnel).
    with server.stopped_by_signals(desk):
        page = door.write(desk.url)
        try:
            browse = not no_open and sys.stdout.isatty()
            shown = f"{desk.address} (opening it in your browser)" if browse else desk.url
            # the URL's token is brain's own and the person needs it whole: past the mask
            present.out(present.with_own_url(f"brain desk for {path}: ", shown))
            present.out(
                f"Any browser here opens it from {page.as_uri()} (yours only, until it stops)."
            )
            present.out("Ctrl-C stops it; it stops by itself after an idle hour.")
            if browse:
                door.open_browser(
                    page,
                    lambda: present.out(
                        present.with_own_url("No browser could be opened: ", desk.url)
                    ),
                )
            why = server.serve(desk, sock, idle=idle)
        finally:
            door.remove(page)
    if why != "hung up":  # the terminal is gone: nothing to say it on
        present.out(f"brain desk stopped ({why}).")
    return 0


def run_mcp(
    *,
    vault: str | None,
    http: bool,
    port: int | None,
    host: str | None,
    allow_host: list[str] | None,
) -> int:
    """`brain mcp`: serve on stdio, or with --http on streamable HTTP behind a token."""
    from brain.config import resolve_vault

    given = [n for n, v in (("--port", port), ("--host", host), ("--allow-host", allow_host)) if v]
    if given and not http:
        raise UsageError(f"{given[0]} serves HTTP: add --http", "brain mcp --http " + given[0])
    if port is not None and not 0 <= port <= 65535:
        raise UsageError(f"--port {port} is not a port", "pass 1 to 65535, or leave it out")
    if vault:
        resolve_vault(vault)  # a wrong --vault is an error now, not on every tool call
    if not http:
        from brain.mcp_server import serve

        serve(vault)
        return 0
    from brain.mcp_server import DEFAULT_PORT, serve_http
    from brain.present import err, setup

    serve_http(
        vault,
        host or "127.0.0.1",
        DEFAULT_PORT if port is None else port,
        tuple(allow_host or ()),
        lambda listening: err(setup.mcp_http(listening)),
    )
    return 0
