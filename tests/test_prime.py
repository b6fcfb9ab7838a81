"""`brain prime` through the real path: a real index of a copy of the fixture vault, the real
CLI in a fresh process with Claude Code's hook JSON on stdin, the real usage log and ledger, the
real warm worker (stopped to hang it)."""

from __future__ import annotations

import json
import os
import signal
import sqlite3
import subprocess
import sys
import time
from collections.abc import Iterator
from pathlib import Path

import pytest
from conftest import ROOT, Run, brain
from test_contract import HIT_KEYS, PRIME_KEYS
from test_hybrid import embedded_state, hvault  # noqa: F401 (fixtures)
from test_imports import HEAVY, imported_modules
from test_thin import start
from test_worker import _alive, _kill, start_worker, stop_workers, wait_for, wvault  # noqa: F401

from brain import config, search, worker_client
from brain.commands import prime as primemod
from brain.deadline import PRIME_DEADLINE
from brain.present import hits

HOOK = ROOT / "testdata" / "hooks" / "claude-user-prompt-submit.json"
POOL = "AI/LEARNINGS.md:36 pgxpool max conns — "  # the answer to the fixture's prompt
SLACK = 3.0  # seconds a loaded machine adds to a process's start and exit (2.5 s seen on 2 cores)
DEFAULT = str(PRIME_DEADLINE)  # the product's (conftest gives the tests a longer one)


def event(prompt: str | None = None, session: str | None = None) -> str:
    doc = json.loads(HOOK.read_text(encoding="utf-8"))
    if prompt is not None:
        doc["prompt"] = prompt
    if session is not None:
        doc["session_id"] = session
    return json.dumps(doc)


def hook(vault: Path, stdin: str, **env: str) -> tuple[float, Run]:
    """Run prime as Claude Code runs the hook: the event on stdin, stdout a pipe."""
    start = time.monotonic()
    run = brain("prime", "--vault", str(vault), input=stdin, env=env)
    return time.monotonic() - start, run


@pytest.fixture(params=["in-process", "worker"])
def ivault(
    request: pytest.FixtureRequest, vault: Path, monkeypatch: pytest.MonkeyPatch
) -> Iterator[Path]:
    """The fixture vault's copy, indexed (keywords: conftest sets BRAIN_EMBED=none). Each test
    runs twice: prime in a process of its own, and forwarded by the thin client to the vault's
    running worker, which must outlive every deadline (prime's watchdog is the client's there)."""
    run = brain("reindex", "--vault", str(vault))
    assert run.code == 0, run.err
    if request.param == "in-process":
        yield vault
        return
    monkeypatch.setenv("BRAIN_WORKER", "1")
    monkeypatch.setenv("BRAIN_WORKER_IDLE", "120")
    pid = start(vault)
    try:
        yield vault
        assert _alive(pid), "the worker did not outlive the test's primes"
    finally:
        _kill(pid)
        stop_workers(worker_client.base_of(vault))


# --- the prompt read as a sentence ---------------------------------------------------------------


def test_pasted_blocks_code_and_logs_do_not_drive_the_query() -> None:
    prompt = (
        "please fix the failing settlement job\n"
        '<pasted_content source="clipboard">kubernetes terraform helm</pasted_content>\n'
        "```go\nfunc main() { pgxpool.New(ctx) }\n```\n"
        "Traceback (most recent call last):\n"
        '  File "/srv/app.py", line 3, in <module>\n'
        '  File "/srv/db.py", line 9, in connect\n'
        "sqlite3.OperationalError: database is locked\n"
        "thanks!"
    )
    said = primemod.sentence(prompt)
    assert "kubernetes" not in said
    assert "pgxpool" not in said
    assert "File" not in said
    assert "database is locked" in said  # a log's last error line names the symptom
    assert primemod.topic_terms(said) == [
        "failing",
        "settlement",
        "job",
        "sqlite3",
        "operationalerror",
        "database",
        "locked",
    ]


def test_a_traceback_with_its_source_lines_is_a_log() -> None:
    frames = "".join(
        f'  File "/srv/app/{name}.py", line {n}, in {name}\n    return {name}_helper(value)\n'
        for n, name in enumerate(["kubernetes", "terraform", "helm", "pgxpool"], 10)
    )
    prompt = (
        "why does the settlement job crash?\n"
        f"Traceback (most recent call last):\n{frames}"
        "sqlite3.OperationalError: database is locked\n"
    )
    said = primemod.sentence(prompt)
    assert said == "why does the settlement job crash? sqlite3.OperationalError: database is locked"


@pytest.mark.parametrize(
    "prompt", ["continue", "thanks, that looks good", "can you please fix it?", "ok go ahead"]
)
def test_chat_words_carry_nothing(prompt: str) -> None:
    assert primemod.topic_terms(primemod.sentence(prompt)) == []


def test_a_short_log_line_in_the_prompt_is_kept() -> None:
    said = primemod.sentence("ERROR: database is locked when brain serve runs")
    assert "database is locked" in said


# --- the hook, real path -------------------------------------------------------------------------


def test_the_hook_fixture_is_what_claude_code_sends() -> None:
    doc = json.loads(HOOK.read_text(encoding="utf-8"))
    assert list(doc) == [
        "session_id",
        "transcript_path",
        "cwd",
        "permission_mode",
        "hook_event_name",
        "prompt",
    ]
    assert doc["hook_event_name"] == "UserPromptSubmit"


def test_the_hook_serves_the_answer_under_one_header_once_per_session(ivault: Path) -> None:
    _, first = hook(ivault, event())
    assert first.code == 0, first.err
    lines = first.out.splitlines()
    assert lines[0] == hits.PRIME_HEADER
    assert any(line.startswith(POOL) for line in lines[1:]), first.out
    assert first.err == ""
    _, again = hook(ivault, event())  # the same session asks the same again
    assert again.code == 0
    assert POOL not in again.out
    _, other = hook(ivault, event(session="another-session"))
    assert POOL in other.out


def test_gemini_gets_the_context_as_the_json_its_hooks_must_print(ivault: Path) -> None:
    """Gemini CLI parses a hook's stdout as JSON (plain text is an error there): its BeforeAgent
    event gets the same lines as hookSpecificOutput.additionalContext; Claude Code's plain."""
    doc = json.loads((HOOK.parent / "gemini-before-agent.json").read_text(encoding="utf-8"))
    doc["prompt"] = json.loads(event())["prompt"]
    _, run = hook(ivault, json.dumps(doc))
    assert run.code == 0, run.err
    out = json.loads(run.out)
    assert list(out) == ["hookSpecificOutput"]
    assert out["hookSpecificOutput"]["hookEventName"] == "BeforeAgent"
    lines = out["hookSpecificOutput"]["additionalContext"].splitlines()
    assert lines[0] == hits.PRIME_HEADER
    assert any(line.startswith(POOL) for line in lines[1:])
    _, again = hook(ivault, json.dumps(doc))  # nothing new to say: nothing at all, not "{}"
    assert (again.code, again.out) == (0, "")


def test_what_find_or_pack_gave_the_session_is_not_served_again(ivault: Path) -> None:
    session = "s-find-first"
    found = brain(
        "find", "--vault", str(ivault), "pgxpool", env={"BRAIN_SESSION": session, "CLAUDECODE": "1"}
    )
    assert found.out.startswith(POOL)
    _, run = hook(ivault, event(session=session))
    assert run.code == 0
    assert POOL not in run.out
    repo = ivault.parent / "payments"  # a repository the vault has a project for
    repo.mkdir()
    subprocess.run(["git", "init", "-q", str(repo)], check=True)
    start = {"session_id": "s-pack-first", "cwd": str(repo), "hook_event_name": "SessionStart"}
    pack = brain("pack", "--vault", str(ivault), input=json.dumps(start), cwd=repo)
    assert "idempotency keys" in pack.out, pack.err
    prompt = "add a new POST endpoint to the payments api for merchant payouts"
    _, other = hook(ivault, event(prompt, session="s-other"))
    assert "AI/MEMORY.md:23 idempotency keys — " in other.out  # what it serves a new session
    _, run = hook(ivault, event(prompt, session="s-pack-first"))
    assert "idempotency keys" not in run.out


@pytest.mark.parametrize(
    "prompt",
    ["write a haiku about autumn", "thanks, that looks good", "continue", "what's 17 times 23"],
)
def test_an_off_topic_prompt_prints_nothing(ivault: Path, prompt: str) -> None:
    _, run = hook(ivault, event(prompt, session=f"s-{prompt}"))
    assert (run.code, run.out, run.err) == (0, "", "")


@pytest.mark.parametrize(
    "prompt",
    [
        "what's the difference between a 401 and a 403 status code",
        "give me a random number between 1 and 1000",
        "what does a 500 internal server error usually mean",
        "explain the difference between a process and a thread",
        "convert a unix timestamp to a readable date in bash",
    ],
)
def test_a_general_question_sharing_a_word_with_the_vault_prints_nothing(
    ivault: Path, prompt: str
) -> None:
    """Each shares a word with the vault (`status`, `random`, `server`, `thread`, `date`), which
    made some hit hold a quarter of its weight: one word is no evidence that it is the topic.
    Nothing of the vault is printed (at most the once-per-session hint, where two of its words
    meet in one unit)."""
    _, run = hook(ivault, event(prompt, session=f"s-{prompt}"))
    assert (run.code, run.err) == (0, "")
    assert run.out in ("", hits.PRIME_HINT + "\n")


@pytest.mark.slow
def test_the_held_out_prompts_are_served_and_the_off_topic_ones_left_alone(
    vault: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    """Issue 27's targets on the held-out half of testdata/prime/prompts.jsonl (never tuned on),
    the stand-out rule as it is, in process with the model as the warm worker has it: >= 92 % of
    task prompts served, >= 90 % of off-topic ones silent. Keywords alone (a cold worker) serve
    fewer and must stay as quiet. tools/bench_prime.py measures the same through the hook."""
    monkeypatch.setenv("BRAIN_EMBED", "onnx")
    monkeypatch.setenv("BRAIN_WORKER", "0")
    assert brain("reindex", "--vault", str(vault)).code == 0
    monkeypatch.syspath_prepend(str(ROOT / "tools"))
    import bench_prime

    judged, _ = bench_prime.judge_all(bench_prime.load(), vault)
    served, silent = bench_prime.score(judged, "hybrid", search.PRIME, "held-out")
    assert served >= 0.92, served
    assert silent >= 0.90, silent
    served, silent = bench_prime.score(judged, "keyword", search.PRIME, "held-out")
    assert served >= 0.80, served  # 0.84 measured
    assert silent >= 0.90, silent


def test_a_paste_alone_does_not_drive_the_hook(ivault: Path) -> None:
    pasted = "<pasted_content>pgxpool MaxConns payments pods connections</pasted_content>"
    _, run = hook(ivault, event(f"thanks, that looks good\n{pasted}", session="s-paste"))
    assert (run.code, run.out) == (0, "")
    _, plain = hook(ivault, "the payments pods run out of db connections under load")
    assert POOL in plain.out  # plain text on stdin is the prompt itself


def test_the_budget_is_honoured(ivault: Path) -> None:
    prompt = "upgrade the node pool this weekend"
    _, full = hook(ivault, event(prompt, session="s1"))
    assert full.out.count("\n") >= 3, full.out  # the header and at least two hits
    budget = len(full.out.encode()) // 4 - 20  # tokens: room for fewer hits
    for n, (env, args) in enumerate(
        (({"BRAIN_PRIME_BUDGET": str(budget)}, []), ({}, ["--budget", str(budget)]))
    ):
        stdin = event(prompt, session=f"s-budget-{n}")
        run = brain("prime", "--vault", str(ivault), *args, input=stdin, env=env)
        assert run.code == 0, run.err
        assert run.out.startswith(hits.PRIME_HEADER)
        assert len(run.out.encode()) <= budget * 4
        assert 2 <= run.out.count("\n") < full.out.count("\n")
    _, tiny = hook(ivault, event(prompt, "s-tiny"), BRAIN_PRIME_BUDGET="10")
    assert (tiny.code, tiny.out) == (0, "")  # not even the header fits: nothing


def test_a_prompt_in_the_vaults_words_that_finds_nothing_gets_the_hint_once(ivault: Path) -> None:
    # It names no bullet: "GKE clusters" (an alias of `cluster names`) would be about that one.
    prompt = "which region is the disaster recovery site for the production clusters"
    _, first = hook(ivault, event(prompt, session="s-hint"))
    assert first.out == hits.PRIME_HINT + "\n"
    _, second = hook(ivault, event(prompt, session="s-hint"))
    assert second.out == ""
    _, served_first = hook(ivault, event(session="s-served"))
    assert POOL in served_first.out
    _, later = hook(ivault, event(prompt, session="s-served"))
    assert later.out == ""  # something was served already: no hint


def test_the_ledger_counts_what_prime_served(ivault: Path) -> None:
    _, run = hook(ivault, event(session="s-ledger"))
    assert POOL in run.out
    hook(ivault, event("continue", session="s-ledger"))  # silent: not a lookup
    ledger = brain("ledger", "--vault", str(ivault), "--json", "--caller", "claude-code")
    doc = ledger.json()
    assert doc["lookups"] == 1
    assert doc["tokens"] == round(len(run.out.encode()) / 4)
    assert doc["saved"] > 0
    assert [s["session"] for s in doc["sessions"]] == ["s-ledger"]


def test_by_hand_and_json(ivault: Path) -> None:
    run = brain("prime", "--vault", str(ivault), "--json", "pods run out of db connections")
    assert run.code == 0, run.err
    doc = run.json()
    assert list(doc) == PRIME_KEYS
    assert all(list(hit) == HIT_KEYS for hit in doc["hits"])
    assert doc["mode"] == "keyword"
    assert doc["hits"][0]["handle"] == "pgxpool max conns"
    assert doc["text"].startswith(hits.PRIME_HEADER)
    assert doc["tokens"] == (len(doc["text"].encode()) + 3) // 4
    plain = brain("prime", "--vault", str(ivault), "pods run out of db connections")
    assert plain.out == doc["text"] + "\n"


# --- never in the way ----------------------------------------------------------------------------


def test_a_corrupt_index_gives_nothing_in_time_and_is_rebuilt(ivault: Path) -> None:
    path = config.index_path(ivault)
    path.write_bytes(b"this is not a database" * 100)
    for suffix in ("-wal", "-shm"):
        Path(str(path) + suffix).unlink(missing_ok=True)
    took, run = hook(ivault, event(), BRAIN_PRIME_DEADLINE=DEFAULT)
    assert (run.code, run.out, run.err) == (0, "", "")
    assert took < 1.0 + SLACK
    wait_for("the background reindex", lambda: POOL in hook(ivault, event(session="s9"))[1].out)


def test_a_missing_vault_gives_nothing_in_time_and_is_logged(tmp_path: Path) -> None:
    took, run = hook(tmp_path / "nowhere", event(), BRAIN_PRIME_DEADLINE=DEFAULT)
    assert (run.code, run.out, run.err) == (0, "", "")
    assert took < 1.0 + SLACK
    # The product's 1 s counts from the process's start: on a loaded machine it can run out
    # before prime has even looked for the vault, and it ends with nothing logged. Whether the
    # reason is logged is asked under conftest's deadline, which a loaded machine does not reach.
    run = hook(tmp_path / "nowhere", event())[1]
    assert (run.code, run.out, run.err) == (0, "", "")
    log = config.state_dir() / "logs" / "prime.log"
    assert "does not exist" in log.read_text(encoding="utf-8")
    by_hand = brain("prime", "--vault", str(tmp_path / "nowhere"), "pgxpool")
    assert by_hand.code == 0
    assert by_hand.out == ""
    assert "does not exist" in by_hand.err


def test_the_deadline_cuts_a_prime_held_up_and_prints_nothing(ivault: Path) -> None:
    """The usage log locked by another process (SQLite then waits 5 s): at the deadline the
    process ends, exit 0, nothing printed."""
    hook(ivault, event("continue"))  # the log exists
    holder = sqlite3.connect(config.usage_log_path(), isolation_level=None)
    holder.execute("BEGIN EXCLUSIVE")
    try:
        took, run = hook(ivault, event(), BRAIN_PRIME_DEADLINE="0.6")
    finally:
        holder.execute("ROLLBACK")
        holder.close()
    assert (run.code, run.out, run.err) == (0, "", "")
    assert took < 0.6 + SLACK
    assert took < 4.0  # far less than the lock's wait


def test_stdin_left_open_is_not_waited_on_past_the_deadline(ivault: Path) -> None:
    proc = subprocess.Popen(
        [sys.executable, "-m", "brain", "prime", "--vault", str(ivault)],
        stdin=subprocess.PIPE,
        stdout=subprocess.PIPE,
        stderr=subprocess.PIPE,
        env={**os.environ, "BRAIN_PRIME_DEADLINE": "0.5"},
    )
    assert proc.stdin is not None
    proc.stdin.write(event()[:40].encode())
    proc.stdin.flush()
    try:
        # stdin still open: without the deadline the read never ends. A bound near the deadline
        # would time the interpreter's start on a loaded machine (the deadline's precision is
        # test_the_deadline_cuts_a_prime_held_up_and_prints_nothing's).
        assert proc.wait(timeout=30) == 0
    finally:
        proc.kill()
        out, err = proc.communicate()
    assert (proc.returncode, out, err) == (0, b"", b"")


def test_stdin_closed_prints_nothing_and_exits_0(ivault: Path) -> None:
    """A hook run with stdin closed (`<&-`) has no prompt and nobody to tell: nothing, exit 0
    (it was exit 2, the usage error meant for a person at a terminal), in a process of its own
    and forwarded to the worker alike."""
    proc = subprocess.run(
        ["sh", "-c", '"$@" <&-', "sh", sys.executable, "-m", "brain", "prime"],
        capture_output=True,
        env={**os.environ, "BRAIN_VAULT": str(ivault)},
        timeout=60,
        check=False,
    )
    assert (proc.returncode, proc.stdout, proc.stderr) == (0, b"", b"")


# Starts every process and times each from its spawn to its exit (os.posix_spawn, os.wait):
# a small process of its own, as an agent starting hooks is; threads in pytest's large process
# spent seconds in fork and the GIL, more than the processes they timed.
LAUNCHER = """
import json, os, sys, time
jobs, stdin, folder = json.loads(sys.argv[1]), sys.argv[2].encode(), sys.argv[3]
started, done = {}, {}

def reap(flags):
    while len(done) < len(started):
        pid, status = os.waitpid(-1, flags)
        if not pid:
            return
        i, at = started[pid]
        done[i] = [time.monotonic() - at, os.waitstatus_to_exitcode(status)]

for i, argv in enumerate(jobs):
    r, w = os.pipe()
    out = os.open(f"{folder}/{i}.out", os.O_WRONLY | os.O_CREAT, 0o600)
    err = os.open(f"{folder}/{i}.err", os.O_WRONLY | os.O_CREAT, 0o600)
    actions = [(os.POSIX_SPAWN_DUP2, r, 0), (os.POSIX_SPAWN_DUP2, out, 1),
               (os.POSIX_SPAWN_DUP2, err, 2)]
    at = time.monotonic()
    pid = os.posix_spawn(argv[0], argv, os.environ, file_actions=actions)
    started[pid] = (i, at)
    for fd in (r, out, err):
        os.close(fd)
    try:
        os.write(w, stdin)  # the event, as the agent writes it, then closes the pipe
    except BrokenPipeError:
        pass
    os.close(w)
    reap(os.WNOHANG)  # one that ended while the others were started is timed now
reap(0)
print(json.dumps([done[i] for i in range(len(jobs))]))
"""


def _launch(jobs: list[list[str]], stdin: str, folder: Path, env: dict[str, str]) -> list[float]:
    """Run `jobs` all at once (LAUNCHER): each one's wall time; its exit code must be 0."""
    folder.mkdir()
    launched = subprocess.run(
        [sys.executable, "-c", LAUNCHER, json.dumps(jobs), stdin, str(folder)],
        capture_output=True,
        env=env,
        timeout=600,
        check=True,
    )
    timed = json.loads(launched.stdout)
    assert [code for _, code in timed] == [0] * len(jobs)
    return [wall for wall, _ in timed]


MARGIN = 0.25  # seconds the slowest prime may end after the slowest of the control's sleepers


@pytest.mark.slow
@pytest.mark.parametrize("deadline", [None, "1"])
def test_fifty_primes_at_once_each_end_by_the_deadline(
    vault: Path, tmp_path: Path, deadline: str | None
) -> None:
    """50 hooks at once with no worker, after 50 processes of the same interpreter that only
    sleep the deadline (the control: the deadline and what this machine adds just now to a
    process's start and exit, and to timing it). Each prime ends by the deadline counted from
    its process's start: the median prime before the median sleeper, the slowest no later than
    the slowest sleeper, give or take MARGIN. Before, the
    deadline was watched only once brain.cli and the command's modules were imported (seconds
    on a loaded machine), counted from brain's import, and its watchdog woke when the system
    got round to it: the slowest took 1.8 to 1.9 s where the sleepers took 1.2 to 1.4 (1.1 to
    1.3 s now), the median 1.2 to 1.6 s (1.0 now). The numbers are printed (pytest -s)."""
    assert brain("reindex", "--vault", str(vault)).code == 0
    env = {**os.environ, "BRAIN_WORKER": "0", "BRAIN_VAULT": str(vault)}
    env.pop("BRAIN_PRIME_DEADLINE")  # conftest's 30 s
    # a pyc cache of its own made every start seconds slower on a loaded machine: an agent's
    # hooks start with the interpreter's own
    env.pop("PYTHONPYCACHEPREFIX", None)
    if deadline is not None:
        env["BRAIN_PRIME_DEADLINE"] = deadline
    seconds = float(deadline or PRIME_DEADLINE)
    sleep = [sys.executable, "-c", f"import runpy, time; time.sleep({seconds})"]
    control = sorted(_launch([sleep] * 50, "", tmp_path / "control", env))
    prime = [sys.executable, "-m", "brain", "prime"]
    walls = sorted(_launch([prime] * 50, event(), tmp_path / "primes", env))
    outs = [(tmp_path / "primes" / f"{i}.out").read_text("utf-8") for i in range(50)]
    answered = [out for out in outs if out]
    print(
        f"\n50 sleepers of {seconds} s: max {control[-1]:.3f} s, median {control[25]:.3f} s, "
        f"min {control[0]:.3f} s; 50 primes: max {walls[-1]:.3f} s, median {walls[25]:.3f} s, "
        f"min {walls[0]:.3f} s, {len(answered)} answered"
    )
    for i in range(50):
        assert (tmp_path / "primes" / f"{i}.err").read_bytes() == b""
    for out in answered:  # an answer whole, or none
        assert POOL in out, out
        assert out.endswith("\n"), out
    assert walls[25] <= control[25]
    assert walls[-1] <= control[-1] + MARGIN


@pytest.mark.slow
def test_a_hung_worker_leaves_the_prompt_to_keywords_in_time(
    wvault: Path,  # noqa: F811
    monkeypatch: pytest.MonkeyPatch,
) -> None:
    # A deadline a loaded machine leaves room in (3 s was not: the fallback's keywords came too
    # late and prime printed nothing); the answer printed at all is what says the hung worker was
    # not waited for, as waiting ends in nothing at the deadline.
    env = {"BRAIN_EMBED": "onnx", "BRAIN_WORKER": "1", "BRAIN_WORKER_IDLE": "120"}
    env["BRAIN_PRIME_DEADLINE"] = "10"
    pid = start_worker(wvault, monkeypatch)
    doc = brain("prime", "--vault", str(wvault), "--json", "pods out of db connections", env=env)
    assert doc.json()["mode"] == "hybrid"  # a warm worker gives the vector half
    os.kill(pid, signal.SIGSTOP)
    try:
        took, run = hook(wvault, event(session="s-hung"), **env)
    finally:
        os.kill(pid, signal.SIGCONT)
    assert run.code == 0
    assert POOL in run.out  # keywords, at once: the worker is replaced, no model is loaded
    assert took < 10.0 + SLACK
    wait_for("the hung worker to be killed", lambda: not _alive(pid), 10)


@pytest.mark.slow
def test_a_cold_worker_is_started_and_the_prompt_gets_keywords(
    wvault: Path,  # noqa: F811
) -> None:
    env = {"BRAIN_EMBED": "onnx", "BRAIN_WORKER": "1", "BRAIN_WORKER_IDLE": "120"}
    base = worker_client.base_of(wvault)
    assert worker_client.read_record(base) is None
    run = brain("prime", "--vault", str(wvault), "--json", "pods out of db connections", env=env)
    assert run.code == 0, run.err
    assert run.json()["mode"] == "keyword"
    assert "onnxruntime" not in run.err
    wait_for("the worker prime started", lambda: worker_client.read_record(base) is not None, 30)


# --- the fast path -------------------------------------------------------------------------------


def test_prime_imports_nothing_heavy(ivault: Path) -> None:
    for args in (["pgxpool max conns"], ["--json", "continue"]):  # in a process of its own
        env = {"BRAIN_WORKER": "0"}
        code, modules = imported_modules("prime", "--vault", str(ivault), *args, env=env)
        assert code == 0
        assert sorted(m for m in modules if m.split(".")[0] in HEAVY) == []


def test_the_hook_is_answered_by_the_worker_as_by_a_process_of_its_own(
    vault: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    """The real hook path with a worker running: the client imports no command of brain's (the
    worker ran it, with the hook's event from the client's stdin) and prints what prime in a
    process of its own prints."""
    assert brain("reindex", "--vault", str(vault)).code == 0
    env = {"BRAIN_WORKER": "1", "BRAIN_WORKER_IDLE": "120"}
    for name, value in env.items():
        monkeypatch.setenv(name, value)
    pid = start(vault)
    try:
        args = ("prime", "--vault", str(vault))
        code, modules = imported_modules(*args, env=env, input=event(session="s-w"), cli=False)
        assert code == 0
        assert "brain.thin" in modules
        assert not {"brain.cli", "brain.commands.prime", "json"} & modules
        served = brain(*args, input=event(session="s-w2"), env=env)
        alone = brain(*args, input=event(session="s-p"), env={"BRAIN_WORKER": "0"})
        assert served == alone
        assert POOL in served.out
        assert _alive(pid)
    finally:
        _kill(pid)
        stop_workers(worker_client.base_of(vault))


def test_help_comes_from_typer() -> None:
    run = brain("prime", "--help")
    assert run.code == 0
    assert "UserPromptSubmit" in run.out


def test_a_usage_error_by_hand_is_said() -> None:
    run = brain("prime", "--budget", "0", "x")
    assert run.code == 2
    assert "--budget" in run.err


def test_a_version_1_usage_log_keeps_its_rows_and_learns_what_was_served(ivault: Path) -> None:
    path = config.usage_log_path()
    path.parent.mkdir(parents=True, exist_ok=True)
    old = sqlite3.connect(path)
    old.executescript(
        "CREATE TABLE events(ts REAL NOT NULL, command TEXT NOT NULL, caller TEXT NOT NULL,"
        " session TEXT NOT NULL, query TEXT NOT NULL, entries INTEGER NOT NULL,"
        " bytes INTEGER NOT NULL, vault TEXT NOT NULL);"
        "CREATE INDEX events_ts ON events(ts);"
        "PRAGMA user_version = 1;"
    )
    old.execute(
        "INSERT INTO events VALUES (1.0, 'find', 'me', 's-old', 'x', 1, 40, ?)", (str(ivault),)
    )
    old.commit()
    old.close()
    _, run = hook(ivault, event(session="s-new"))
    assert POOL in run.out
    _, again = hook(ivault, event(session="s-new"))
    assert POOL not in again.out
    log = sqlite3.connect(path)
    assert log.execute("PRAGMA user_version").fetchone()[0] == 3
    assert log.execute("SELECT count(*) FROM events").fetchone()[0] == 2
    log.close()


# --- one stand-out rule with find (search.Rule; prime asks search.PRIME) -----------------------


def test_prime_judges_by_finds_evidence_more_strictly(tmp_path: Path) -> None:
    """prime and find weigh the same evidence (search.Judge) by one rule, prime's instance the
    stricter. A prompt that names a bullet (every word of its handle) is about it, for prime as
    for find, however many words the vault lacks beside it; before, prime's rule of its own knew
    nothing of names, those words outweighed the handle's and it stayed silent. One word the
    vault's bullets share is enough for find's answer, and never for prime."""
    from test_rank import bullet, make_vault

    vault = make_vault(
        tmp_path / "v",
        [
            bullet(
                "helm reuse values", "helm upgrade with reuse-values keeps the old chart values"
            ),
            *(
                bullet(f"{name} values", f"the {name} config takes its values from the environment")
                for name in ("kafka", "redis", "nginx", "vault", "grafana")
            ),
        ],
    )
    assert brain("reindex", "--vault", str(vault)).code == 0
    named = "why do helm reuse values misbehave with zorblat quixotic frimble wendigo parlance"
    for command in ("find", "prime"):
        run = brain(command, "--vault", str(vault), "--json", named)
        assert run.code == 0, run
        doc = run.json()
        assert doc["hits"][0]["handle"] == "helm reuse values", command
    assert brain("find", "--vault", str(vault), "--json", "helm values").json()["evidence"] == (
        "strong"
    )
    shared = brain("prime", "--vault", str(vault), "--json", "which environment values apply")
    assert (shared.code, shared.json()["hits"]) == (0, [])
    assert search.PRIME.telling > search.FIND.telling  # the stricter instance of one Rule


@pytest.mark.slow
def test_a_question_the_world_answers_gets_nothing_from_a_warm_worker(
    wvault: Path,  # noqa: F811
    monkeypatch: pytest.MonkeyPatch,
) -> None:
    """`explain how DNS TXT records work` holds two words of a bullet (`dns`, `records`) and its
    cosine rose over the neighbours' enough to stand out: prime served two DNS bullets. Its
    meaning is nearer a general question (brain/data/general.txt) than any bullet's, which the
    warm worker now sends with the neighbours (search.Near.general), so it gets nothing, while
    a task about the vault's DNS still gets its bullet."""
    pid = start_worker(wvault, monkeypatch)
    env = {"BRAIN_EMBED": "onnx", "BRAIN_WORKER": "1", "BRAIN_WORKER_IDLE": "120"}
    try:
        asked = worker_client.ask(wvault, "explain how DNS TXT records work", 5)
        assert asked.hits
        assert asked.general is not None
        assert 0.3 < asked.general <= 1.0, asked
        args = ("prime", "--vault", str(wvault), "--json")
        general = brain(*args, "explain how DNS TXT records work", env=env).json()
        assert (general["mode"], general["hits"]) == ("hybrid", [])
        task = brain(*args, "move the website DNS records to the new provider", env=env).json()
        assert task["mode"] == "hybrid"
        assert "dns provider" in [h["handle"] for h in task["hits"]]
    finally:
        _kill(pid)
