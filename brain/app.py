"""The Typer app: parses arguments, calls a command module, renders its result."""

from __future__ import annotations

import contextlib
import dataclasses
import sys
from collections.abc import Callable, Iterator
from pathlib import Path
from typing import TYPE_CHECKING, Annotated, Any

import typer

from brain import cli, render
from brain.errors import UsageError
from brain.files import printable

if TYPE_CHECKING:
    from brain.commands.propose import ProposeResult

app = typer.Typer(
    name="brain",
    help=(
        "A local-first memory for coding agents. The vault is a git repository of Markdown; "
        "a disposable SQLite index (FTS5) in the state dir makes it fast to search."
    ),
    no_args_is_help=True,
    add_completion=False,
    pretty_exceptions_enable=False,
    context_settings={"help_option_names": ["-h", "--help"]},
)

VaultOpt = Annotated[
    str | None,
    typer.Option(
        "--vault",
        help="The vault (a folder with AI/ in it). Default: $BRAIN_VAULT, else the recorded vault.",
        show_default=False,
    ),
]
JsonOpt = Annotated[bool, typer.Option("--json", help="Print one JSON object on stdout.")]


@app.command("find")
def find_command(
    query: Annotated[list[str], typer.Argument(help="What to look for, in plain words.")],
    vault: VaultOpt = None,
    limit: Annotated[
        int | None, typer.Option("--limit", "-n", help="At most this many hits (default 10).")
    ] = None,
    budget: Annotated[
        int | None,
        typer.Option("--budget", help="Byte cap on the output for this call (default 2400)."),
    ] = None,
    raw: Annotated[bool, typer.Option("--raw", help="Print each hit's line as written.")] = False,
    terse: Annotated[
        bool, typer.Option("--terse", help="One line per hit, as agents get, even at a terminal.")
    ] = False,
    as_json: JsonOpt = False,
) -> None:
    """Find the bullets and notes that answer QUERY. Exit 1 when nothing matches, as grep does."""
    raise typer.Exit(cli.run_find(query, vault, limit, budget, raw, terse, as_json))


def _reindex(vault: str | None, full: bool, as_json: bool) -> None:
    with _progress("Embedding", enabled=not as_json) as progress:
        code = cli.run_reindex(vault, full, as_json, progress)
    raise typer.Exit(code)


@contextlib.contextmanager
def _progress(label: str, *, enabled: bool) -> Iterator[Callable[[int, int], None] | None]:
    """A progress bar on stderr for long runs at a terminal; nothing for hooks and pipes."""
    if not (enabled and sys.stderr.isatty()):
        yield None
        return
    from rich.progress import Progress

    with Progress(transient=True) as bar:
        task = bar.add_task(label, total=None)

        def update(done: int, total: int) -> None:
            if total >= 200:
                bar.update(task, completed=done, total=total)

        yield update


FullOpt = Annotated[
    bool,
    typer.Option("--full", help="Rebuild from nothing into a new file, swapped in atomically."),
]


@app.command("reindex")
def reindex_command(
    vault: VaultOpt = None, full: FullOpt = False, as_json: JsonOpt = False
) -> None:
    """Bring the index up to date with the vault (only changed files are read again)."""
    _reindex(vault, full, as_json)


@app.command("sync")
def sync_command(
    action: Annotated[
        str | None,
        typer.Argument(help="status, connect, on or off (default: one pass).", show_default=False),
    ] = None,
    url: Annotated[
        str | None, typer.Argument(help="With connect: the remote's URL.", show_default=False)
    ] = None,
    vault: VaultOpt = None,
    as_json: JsonOpt = False,
    background: Annotated[str | None, typer.Option("--background", hidden=True)] = None,
) -> None:
    """Share the vault with your other machines over git: write down, receive, send.

    `status` says where sync stands, `connect URL` where the vault meets the other machines,
    `off` and `on` stop and restart it for this vault on this machine (also BRAIN_SYNC=off).
    Exit 1 when something is left waiting: not connected, offline, a refused line, a conflict.
    """
    raise typer.Exit(cli.run_sync(action, url, vault, as_json, background))


@app.command("lint")
def lint_command(
    paths: Annotated[
        list[str] | None, typer.Argument(help="Files to check (default: the core files).")
    ] = None,
    staged: Annotated[
        bool, typer.Option("--staged", help="Check what is staged for commit (git index).")
    ] = False,
    strict: Annotated[
        bool,
        typer.Option(
            "--strict",
            help="Bullets and synonyms must be plain prose (as `lint: strict` in AI/config.yaml"
            " asks).",
        ),
    ] = False,
    vault: VaultOpt = None,
    as_json: JsonOpt = False,
) -> None:
    """Check that every bullet parses, ends in a valid date, has a unique handle and no secret.

    Every line the index reads is checked by the guard too: hidden or bidi characters, words that
    mix scripts, images. `--strict` (or `lint: strict` in AI/config.yaml) holds bullets and
    synonyms to plain prose.
    """
    from brain.commands.lint import lint
    from brain.config import resolve_vault

    result = lint(resolve_vault(vault), paths or None, staged=staged, strict=strict or None)
    if as_json:
        render.out(
            render.dumps(
                {
                    "ok": result.ok,
                    "strict": result.strict,
                    "files": list(result.files),
                    "bullet_count": result.bullet_count,
                    "problems": [render.doc(p) for p in result.problems],
                }
            )
        )
    elif result.problems:
        render.out("\n".join(str(p) for p in result.problems))
        found = render.plural(len(result.problems), "problem")
        sys.stderr.write(f"{found}; fix them and run `brain lint` again\n")
    else:
        bullets = render.plural(result.bullet_count, "bullet")
        strictly = " (strict)" if result.strict else ""
        render.out(f"{bullets} in {render.plural(len(result.files), 'file')}: all good{strictly}.")
    raise typer.Exit(0 if result.ok else 1)


@app.command("version")
def version_command(as_json: JsonOpt = False) -> None:
    """Print the release tag (or `dev` for a local build) and the commit it was built from."""
    from brain.commands.version import version

    result = version()
    if as_json:
        render.out(render.dumps(render.doc(result)))
    else:
        commit = f" ({result.commit})" if result.commit else ""
        render.out(f"brain {result.version}{commit}")


def _version_option(value: bool) -> None:
    if value:
        version_command()
        raise typer.Exit


@app.callback()
def _options(
    version: Annotated[
        bool,
        typer.Option(
            "--version",
            callback=_version_option,
            is_eager=True,
            help="Print the version, as `brain version` does, and exit.",
        ),
    ] = False,
) -> None:
    pass


@app.command("secrets")
def secrets_command(
    paths: Annotated[
        list[str] | None,
        typer.Argument(help="Files or folders to scan (default: every file of the vault)."),
    ] = None,
    staged: Annotated[
        bool, typer.Option("--staged", help="Scan what is staged for commit (git index).")
    ] = False,
    history: Annotated[
        bool,
        typer.Option(
            "--history", help="Scan every version of every file in every commit of the vault."
        ),
    ] = False,
    vault: VaultOpt = None,
    as_json: JsonOpt = False,
) -> None:
    """Find credentials (API keys, tokens, private keys) in the vault. Exit 1 when any is found.

    Uses gitleaks as well when it is on PATH. The pre-commit hook runs `brain secrets --staged`.
    `--history` finds a credential committed once and deleted since, with the commit that added it.
    """
    from brain.commands.secrets import scan
    from brain.config import resolve_vault

    if history:
        if staged or paths:
            raise UsageError(
                "--history reads every commit of the vault: it takes no PATHS and no --staged",
                "brain secrets --history",
            )
        raise typer.Exit(_secrets_history(resolve_vault(vault), as_json=as_json))
    result = scan(resolve_vault(vault), paths or None, staged=staged)
    also = " (and gitleaks)" if result.gitleaks else ""
    if as_json:
        render.out(render.dumps(dataclasses.asdict(result)))
    elif result.findings:
        render.out(
            "\n".join(
                f"{printable(f.path)}:{f.line}: {f.rule} ({f.masked})" for f in result.findings
            )
        )
    if not as_json:
        for skipped in result.skipped:
            sys.stderr.write(f"{skipped}\n")
        unread = f"; {render.plural(len(result.skipped), 'file')} not read (above)"
        unread = unread if result.skipped else ""
        if result.findings:
            found = render.plural(len(result.findings), "possible secret")
            files = render.plural(len({f.path for f in result.findings}), "file")
            sys.stderr.write(
                f"{found} in {files}{also}; remove them and keep credentials in a password "
                f"manager{unread}\n"
            )
        else:
            scanned = render.plural(len(result.files), "file")
            sys.stderr.write(f"no secrets in {scanned}{also}{unread}\n")
    raise typer.Exit(0 if result.ok else 1)


def _secrets_history(vault: Path, *, as_json: bool) -> int:
    from brain.commands.secrets import history

    result = history(vault)
    if as_json:
        render.out(render.dumps(dataclasses.asdict(result)))
        return 0 if result.ok else 1
    if result.findings:
        render.out(
            "\n".join(
                f"{f.commit} {f.date} {printable(f.path)}:{f.line}: {f.rule} ({f.masked})"
                for f in result.findings
            )
        )
    for skipped in result.skipped:
        sys.stderr.write(f"{skipped}\n")
    read = (
        f"{render.plural(result.commit_count, 'commit')}, "
        f"{render.plural(result.blob_count, 'distinct file version')} read"
    )
    if result.findings:
        found = render.plural(len(result.findings), "possible secret")
        sys.stderr.write(
            f"{found} in the history ({read}); each stays in every clone even once deleted: "
            "revoke it, then rewrite the history (git filter-repo) if the vault is shared\n"
        )
    else:
        sys.stderr.write(f"no secrets in the history ({read})\n")
    return 0 if result.ok else 1


@app.command("install")
def install_command(
    path: Annotated[
        str | None,
        typer.Argument(
            help="The vault folder. Default: $BRAIN_VAULT, else the recorded vault, else "
            "~/Documents/Brain (created as a git repository with a starter AI/).",
            show_default=False,
        ),
    ] = None,
    init: Annotated[
        bool,
        typer.Option(
            "--init",
            help="Run `git init` in an existing folder that is not a git repository yet "
            "(asked at a terminal; required otherwise).",
        ),
    ] = False,
    yes: Annotated[bool, typer.Option("--yes", "-y", hidden=True)] = False,  # same as --init
    as_json: JsonOpt = False,
) -> None:
    """Set up the vault: record it, put brain on PATH, hook git and Claude Code, build the index.

    Running it again changes nothing; with another PATH it moves to that vault.
    """
    from brain.commands.install import choose_vault, install
    from brain.errors import BrainError

    init = init or yes
    choice = choose_vault(path)
    if choice.needs_init and not init and not as_json and sys.stdin.isatty():
        init = typer.confirm(
            f"{choice.path} is not a git repository. Run `git init` there and use it as the vault?",
            default=False,
            err=True,
        )
        if not init:
            raise BrainError("nothing was installed", "pick another folder, or pass --init")
    result = install(choice, init=init)
    if as_json:
        render.out(render.dumps(dataclasses.asdict(result)))
    else:
        render.out("\n".join(_install_lines(result)))
    failed = [h for h in (result.claude, *result.agents) if h.failed]
    for h in failed:  # everything else is in place; these hooks are not, and that must show
        sys.stderr.write(f"brain: {h.message}\n")
    if failed:
        raise typer.Exit(1)


def _install_lines(r: Any) -> list[str]:
    if r.created:
        how = "created: a new git repository with the starter AI/"
    elif r.git_init:
        how = "git init" + (", starter AI/ added" if r.starter else "")
    else:
        how = "starter AI/ added" if r.starter else "used as it is"
    if r.commit:
        how += f", committed as {r.commit}"
    lines = [f"Vault: {r.vault} ({how})"]
    if r.moved_from:
        lines.append(f"Moved from {r.moved_from}; its previous git hooks are back in place")
    lines.append(f"Recorded in {r.recorded}")
    link = r.path_link
    lines.append(
        {
            "created": f"PATH: linked {link.path} -> {link.target}",
            "updated": f"PATH: {link.path} now points at {link.target}",
            "kept": f"PATH: {link.path} -> {link.target} (already there)",
            "on-path": f"PATH: {link.message}",
            "exists": f"PATH: {link.path} exists",
            "failed": "PATH: no link made",
        }.get(link.action, f"PATH: {link.action}")
    )
    if link.message and link.action != "on-path":
        lines.append(f"  note: {link.message}")
    gh = r.git_hooks
    lines.append(f"Git hooks: core.hooksPath = {gh.dir} ({', '.join(gh.hooks)})")
    before = f"another tool's {gh.previous}" if gh.previous else gh.chains
    lines.append(f"  hooks in {before} and the global core.hooksPath still run first")
    ix = r.index
    bullets, files = render.plural(ix.bullet_count, "bullet"), render.plural(ix.file_count, "file")
    lines.append(f"Index: {bullets} from {files} in {ix.ms:.0f} ms")
    lines += [_agent_line(h) for h in (r.claude, *r.agents)]
    if r.sync:
        lines.append(f"Sync: {r.sync}")
    lines.append(r.next)
    return lines


def _agent_line(h: Any) -> str:
    """One line for what happened to brain's hooks in one agent's config."""
    from brain.agent_hooks import AGENTS

    label = AGENTS[h.agent].label
    hooks = f" ({', '.join(h.hooks)})" if h.hooks else ""
    done = {
        "added": f"brain's hooks added to {h.settings}{hooks}",
        "updated": f"brain's hooks updated in {h.settings}{hooks}",
        "present": f"brain's hooks already in {h.settings}",
        "removed": f"removed brain's hooks from {h.settings}{hooks}",
        "absent": f"no brain hooks in {h.settings}",
    }
    return f"{label}: {done.get(h.action, f'not changed ({h.action}; see below)')}"


@app.command("uninstall")
def uninstall_command(as_json: JsonOpt = False) -> None:
    """Undo `brain install`: git hooks, the SessionStart hook, the PATH link, the record.

    It also stops the background worker and deletes the indexes. The vault and its history are
    left alone; a core.hooksPath another tool had set is restored; the state brain leaves (your
    usage log, recall's transcripts, your settings) is named with the command that deletes it.
    """
    from brain.commands.install import uninstall

    r = uninstall()
    if as_json:
        render.out(render.dumps(dataclasses.asdict(r)))
    else:
        render.out("\n".join(_uninstall_lines(r)))
    failed = [h for h in (r.claude, *r.agents) if h.failed]
    for h in failed:
        sys.stderr.write(f"brain: {h.message}\n")
    if failed:
        raise typer.Exit(1)


def _uninstall_lines(r: Any) -> list[str]:
    lines = []
    for gh in r.git_hooks:
        if gh.action == "removed":
            back = (
                f"core.hooksPath is {gh.previous} again" if gh.previous else "core.hooksPath unset"
            )
            lines.append(f"Git hooks: {gh.vault}: {back}; deleted {len(gh.hooks)} from {gh.dir}")
        elif gh.message:
            lines.append(f"Git hooks: {gh.vault}: {gh.message}")
    if not any(gh.action == "removed" for gh in r.git_hooks):
        lines.append("Git hooks: none of brain's were installed")
    lines += [_agent_line(h) for h in (r.claude, *r.agents)]
    link = r.path_link
    if link.action == "removed":
        lines.append(f"PATH: removed {link.path}")
    elif link.message:
        lines.append(f"PATH: {link.message}")
    if r.recorded:
        lines.append(f"Forgot the vault {r.vault} (the record in {r.recorded})")
    if r.indexes:
        lines.append(
            f"Deleted {render.plural(len(r.indexes), 'index file')} and their cached packs "
            "(brain reindex rebuilds them)"
        )
    if r.workers:
        pids = ", ".join(str(p) for p in r.workers)
        lines.append(
            f"Stopped the background {render.plural(len(r.workers), 'worker')} (pid {pids})"
        )
    if r.vault:
        lines.append(f"The vault {r.vault} and its history are untouched")
    if r.left:
        import shlex

        lines.append(
            f"Left in place: {', '.join(r.left)} (your lookup log, recall's transcripts.db and "
            f"settings); to remove them too: rm -r {' '.join(shlex.quote(p) for p in r.left)}"
        )
    return lines


@app.command("hooks")
def hooks_command(
    action: Annotated[
        str, typer.Argument(help="on, off or status.", show_default=False)
    ] = "status",
    harness: Annotated[
        str | None,
        typer.Option(
            "--harness", help="Only this agent program: claude, codex, gemini or copilot."
        ),
    ] = None,
    as_json: JsonOpt = False,
) -> None:
    """Turn brain's hooks on or off in your agents, or show which are on.

    Three hooks per agent program: `brain pack` when a session starts, `brain prime` on each
    prompt, `brain settle` when a turn ends, each in the program's own hook config beside what
    is there. `on` registers them in Claude Code and every other agent found on this machine (or
    the one --harness names); `off` removes only brain's entries; a config that does not parse is
    left as it is and named.
    """
    from brain.commands import hooks as cmd

    if action not in ("on", "off", "status"):
        raise UsageError(f"{action!r} is not on, off or status", "brain hooks on")
    if action == "status":
        state = cmd.status(harness)
        if as_json:
            render.out(render.dumps(dataclasses.asdict(state)))
        else:
            render.out("\n".join(_status_lines(state)))
        return
    result = cmd.switch(action == "on", harness)
    if as_json:
        render.out(render.dumps(dataclasses.asdict(result)))
    else:
        render.out("\n".join(_agent_line(h) for h in result.harnesses))
    failed = [h for h in result.harnesses if h.failed]
    for h in failed:
        sys.stderr.write(f"brain: {h.message}\n")
    if failed:
        raise typer.Exit(1)


def _status_lines(state: Any) -> list[str]:
    if not state.harnesses:
        return ["No agent program found (Claude Code, Codex CLI, Gemini CLI, Copilot CLI)"]
    lines = []
    for s in state.harnesses:
        where = "" if s.found else " (not found on this machine)"
        if s.problem:
            lines.append(f"{s.label}{where}: {s.problem}")
        else:
            on = ", ".join(f"{role} {getattr(s, role)}" for role in ("pack", "prime", "settle"))
            lines.append(f"{s.label}{where}: {on} in {s.settings}")
        if s.note:
            lines.append(f"  note: {s.note}")
    return lines


@app.command("pack")
def pack_command(
    project: Annotated[
        str | None,
        typer.Argument(
            help="The project (default: the git repository you are in, by its folder name).",
            show_default=False,
        ),
    ] = None,
    vault: VaultOpt = None,
    budget: Annotated[
        int | None,
        typer.Option("--budget", help="Token cap on the pack (bytes / 4; default 1500)."),
    ] = None,
    fresh: Annotated[
        bool, typer.Option("--fresh", help="Rebuild the pack instead of serving the cached one.")
    ] = False,
    as_json: JsonOpt = False,
) -> None:
    """Print the briefing an agent opens a project with, within --budget tokens.

    The project's bullets, the working rules, the newest handoff and the state folder; Claude
    Code's SessionStart hook runs it. With no PROJECT it packs the repository you are in; a
    repository the vault knows nothing about prints nothing and exits 0.
    """
    raise typer.Exit(cli.run_pack(project, vault, budget, fresh, as_json))


@app.command("settle")
def settle_command() -> None:
    """Ask an agent, once per session, to propose what it settled before it stops.

    The agents' stop hook (`brain hooks on` registers it): it reads the stop event on stdin and,
    when the session wrote files and proposed nothing, prints `{"decision": "block", "reason":
    ...}` naming the files and the corrections the user made. Otherwise it prints nothing. It
    always exits 0.
    """
    raise typer.Exit(cli.run_settle())


@app.command("prime")
def prime_command(
    prompt: Annotated[
        list[str] | None,
        typer.Argument(
            help="The prompt (default: Claude Code's hook JSON on stdin).", show_default=False
        ),
    ] = None,
    vault: VaultOpt = None,
    budget: Annotated[
        int | None,
        typer.Option(
            "--budget", help="Token cap (bytes / 4; default 1200, or BRAIN_PRIME_BUDGET)."
        ),
    ] = None,
    as_json: JsonOpt = False,
) -> None:
    """Print what the vault holds on a prompt, for the agent about to answer it.

    Claude Code's UserPromptSubmit hook runs it with the hook's JSON on stdin. Only what stands
    out is served, each unit once per session, within the budget and the deadline
    (BRAIN_PRIME_DEADLINE, default 1 s); it always exits 0 and prints nothing rather than late.
    """
    raise typer.Exit(cli.run_prime(prompt or (), vault, budget, as_json))


@app.command("recall")
def recall_command(
    query: Annotated[
        list[str] | None, typer.Argument(help="What was said, in plain words.", show_default=False)
    ] = None,
    full: Annotated[
        str | None, typer.Option("--full", help="Print one turn in full, by its id.")
    ] = None,
    sync: Annotated[
        bool, typer.Option("--sync", help="Read every enabled transcript again from the start.")
    ] = False,
    sources: Annotated[
        bool, typer.Option("--sources", help="List the adapters and which are enabled.")
    ] = False,
    enable: Annotated[
        str | None, typer.Option("--enable", help="Opt in to an agent's transcripts (once).")
    ] = None,
    disable: Annotated[
        str | None,
        typer.Option("--disable", help="Opt out of an agent; its turns are deleted from recall."),
    ] = None,
    all_sessions: Annotated[
        bool, typer.Option("--all", help="Include the current session (excluded by default).")
    ] = False,
    limit: Annotated[int, typer.Option("--limit", "-n", help="At most this many hits.")] = 10,
    since: Annotated[
        str | None, typer.Option("--since", help="Only turns from DATE on (2025-05-01, 7d).")
    ] = None,
    agent: Annotated[
        str | None, typer.Option("--agent", help="Only this agent's turns (claude, codex, ...).")
    ] = None,
    cwd: Annotated[
        str | None, typer.Option("--cwd", help="Only turns from sessions in this folder or below.")
    ] = None,
    as_json: JsonOpt = False,
) -> None:
    """Search what was said in your agents' transcripts (opt in per agent with --enable).

    Transcripts stay in transcripts.db in the state dir, never in the vault. Exit 1 when nothing
    matches.
    """
    from brain.recall.cli import run_recall

    raise typer.Exit(
        run_recall(
            query or [],
            full=full,
            sync=sync,
            sources=sources,
            enable=enable,
            disable=disable,
            all_sessions=all_sessions,
            limit=limit,
            since=since or "",
            agent=agent or "",
            cwd=cwd or "",
            as_json=as_json,
            progress=_progress,
        )
    )


@app.command("update")
def update_command(
    rollback: Annotated[
        bool, typer.Option("--rollback", help="Put back the version the last update replaced.")
    ] = False,
    check: Annotated[
        bool, typer.Option("--check", help="Only say whether a newer release is waiting.")
    ] = False,
    as_json: JsonOpt = False,
) -> None:
    """Install the newest release (signature and checksums verified), then run `brain doctor`.

    Only an installation made by install.sh or install.ps1 updates itself; a local build (`dev`)
    never does. Set BRAIN_NO_UPDATE=1 to silence the once-a-day notice.
    """
    from brain.commands.update import rollback as do_rollback
    from brain.commands.update import update

    result = do_rollback() if rollback else update(check_only=check)
    if as_json:
        render.out(render.dumps(render.doc(result)))
        return
    if result.action == "current":
        render.out(f"brain {result.current} is the newest release; nothing to do.")
        return
    if result.action == "available":
        render.out(f"brain {result.current} is available (this is {result.previous}).")
        return
    verb = "Updated" if result.action == "updated" else "Rolled back"
    lines = [f"{verb}: brain {result.previous} -> {result.current}"]
    if result.check:
        lines.append(result.check)
    render.out("\n".join(lines))
    if not result.check_ok:
        sys.stderr.write(
            f"the check of brain {result.current} reported a problem; "
            f"`brain update --rollback` puts {result.previous} back\n"
        )


SinceOpt = Annotated[
    str | None,
    typer.Option("--since", help="Only lookups from DATE on (2026-05-01, 7d, 2w, 24h)."),
]


@app.command("ledger")
def ledger_command(
    vault: VaultOpt = None,
    since: SinceOpt = None,
    caller: Annotated[
        str | None, typer.Option("--caller", help="Only this caller's lookups (e.g. claude-code).")
    ] = None,
    as_json: JsonOpt = False,
) -> None:
    """Show the tokens returned per caller, session and day, and the tokens saved.

    Saved: against reading the core files whole for every lookup.
    """
    from brain.commands.ledger import ledger, text
    from brain.config import resolve_vault

    result = ledger(resolve_vault(vault), since=since or "", caller=caller or "")
    if as_json:
        render.out(render.dumps(dataclasses.asdict(result)))
    elif sys.stdout.isatty():
        render.print_rich(text(result, chart=True))
    else:
        render.out(text(result, chart=False))


@app.command("log")
def log_command(vault: VaultOpt = None, since: SinceOpt = None, as_json: JsonOpt = False) -> None:
    """List the finds that returned nothing and still do: the backlog for bullets and synonyms."""
    from brain.commands.log import log, text
    from brain.config import resolve_vault

    result = log(resolve_vault(vault), since=since or "")
    render.out(render.dumps(dataclasses.asdict(result)) if as_json else text(result))


@app.command("doctor")
def doctor_command(vault: VaultOpt = None, as_json: JsonOpt = False) -> None:
    """Check the vault, git hooks, index, model, SQLite and SessionStart hook.

    Exit 1 when one is broken. Also lists bullets to promote, older notes to update and
    near-duplicate bullets.
    """
    from brain.commands.doctor import doctor, text

    result = doctor(vault)
    render.out(render.dumps(dataclasses.asdict(result)) if as_json else text(result))
    raise typer.Exit(0 if result.ok else 1)


ApplyOpt = Annotated[bool, typer.Option("--apply", help="Write the changes (a line edit each).")]


@app.command("verify")
def verify_command(
    handles: Annotated[
        list[str] | None,
        typer.Argument(
            help="Bullets by handle or alias (default: every bullet).", show_default=False
        ),
    ] = None,
    apply: Annotated[
        bool, typer.Option("--apply", help="Date today the bullets whose every claim passed.")
    ] = False,
    vault: VaultOpt = None,
    as_json: JsonOpt = False,
) -> None:
    """Check the claims bullets make that this machine can: paths, files, commands, commits.

    Each claim passed, failed, or cannot check (a path on another machine, a repository not
    here). Exit 1 when a claim failed.
    """
    from brain.commands.verify import text, verify
    from brain.config import resolve_vault

    result = verify(
        resolve_vault(vault), [cli.argv_text(h, "the handle") for h in handles or []], apply=apply
    )
    render.out(render.dumps(dataclasses.asdict(result)) if as_json else text(result))
    raise typer.Exit(1 if result.failed_count else 0)


@app.command("learn")
def learn_command(
    apply: ApplyOpt = False, vault: VaultOpt = None, as_json: JsonOpt = False
) -> None:
    """Propose as aliases the words people search with that reach a bullet only by its body.

    Also lists the aliases no logged query used. `--apply` writes the proposed aliases.
    """
    from brain.commands.learn import learn, text
    from brain.config import resolve_vault

    result = learn(resolve_vault(vault), apply=apply)
    render.out(render.dumps(dataclasses.asdict(result)) if as_json else text(result))


@app.command("tend")
def tend_command(
    dry_run: Annotated[
        bool, typer.Option("--dry-run", help="Say what it would apply and propose; write nothing.")
    ] = False,
    daily: Annotated[
        bool,
        typer.Option("--daily", help="The hooks' quiet sweep: once a day, bounded, exit 0."),
    ] = False,
    vault: VaultOpt = None,
    as_json: JsonOpt = False,
) -> None:
    """Sweep the vault: apply free fixes (aliases), queue the rest in the inbox for a person.

    Hygiene items (mark a note superseded, drop a bullet whose claims failed, merge bullets that
    share a handle, date verified bullets) wait in `brain inbox`; `brain inbox approve N` applies.
    """
    from brain.commands import tend
    from brain.config import resolve_vault

    if daily and not dry_run and not as_json:
        raise typer.Exit(cli.run_daily(vault))
    budget = tend.DAILY_SECONDS if daily else None
    result = tend.tend(resolve_vault(vault), dry_run=dry_run, daily=daily, budget=budget)
    render.out(render.dumps(dataclasses.asdict(result)) if as_json else tend.text(result))


@app.command("review")
def review_command(
    mode: Annotated[
        str | None,
        typer.Argument(help="before (the default) or after; none: show it.", show_default=False),
    ] = None,
    vault: VaultOpt = None,
    as_json: JsonOpt = False,
) -> None:
    """When a proposal starts answering finds: `before` a person approves it, or `after`.

    `after`: a proposal answers at once, marked unreviewed in every output, until approved or
    dropped. Stored in the vault's AI/config.yaml (committed) so every machine agrees.
    """
    from brain.commands.review import review, text
    from brain.config import resolve_vault

    result = review(resolve_vault(vault), mode)
    render.out(render.dumps(dataclasses.asdict(result)) if as_json else text(result))


@app.command("desk")
def desk_command(
    vault: VaultOpt = None,
    port: Annotated[
        int, typer.Option("--port", help="Listen on this port of 127.0.0.1 (default: any free).")
    ] = 0,
    no_open: Annotated[
        bool, typer.Option("--no-open", help="Print the URL only; do not open a browser.")
    ] = False,
    idle: Annotated[float, typer.Option("--idle", hidden=True)] = 3600.0,
) -> None:
    """Open the desk: a local web page to review the inbox, misses, ledger, health and search.

    Listens on 127.0.0.1 only, behind the per-run token in the URL it prints.
    Stops after an idle hour or Ctrl-C.
    """
    from brain.config import resolve_vault

    path = resolve_vault(vault)
    if not 0 <= port <= 65535:
        raise UsageError(f"--port {port} is not a port", "pass 1 to 65535, or leave it out")
    from brain.desk import server

    sock = server.bind(port)
    desk = server.Desk(path, sock.getsockname()[1])
    render.out(f"brain desk for {path}: {desk.url}")
    render.out("Ctrl-C stops it; it stops by itself after an idle hour.")
    if not no_open and sys.stdout.isatty():
        import webbrowser

        webbrowser.open(desk.url)
    why = server.serve(desk, sock, idle=idle)
    render.out(f"brain desk stopped ({why}).")


@app.command("locate")
def locate_command(
    handle: Annotated[list[str], typer.Argument(help="The bullet's handle or an alias.")],
    vault: VaultOpt = None,
    as_json: JsonOpt = False,
) -> None:
    """Print where a bullet lives (path:line) and its line as written; exit 1 when none matches."""
    from brain.commands.locate import locate, missing, text
    from brain.config import resolve_vault

    result = locate(resolve_vault(vault), cli.argv_text(" ".join(handle), "the handle"))
    if not as_json and not result.matches:
        raise missing(result)
    render.out(render.dumps(dataclasses.asdict(result)) if as_json else text(result))
    raise typer.Exit(0 if result.matches else 1)


@app.command("mcp")
def mcp_command(vault: VaultOpt = None) -> None:
    """Serve brain's tools (find, recall, pack, propose, locate) over MCP on stdio, for agents.

    Register it with your agent, e.g. `claude mcp add --scope user brain -- brain mcp`.
    """
    from brain.config import resolve_vault

    if vault:
        resolve_vault(vault)  # a wrong --vault is an error now, not on every tool call
    from brain.mcp_server import serve

    serve(vault)


ToOpt = Annotated[
    str | None,
    typer.Option(
        "--to",
        help="The core file it belongs in: MEMORY (default), LEARNINGS or TUNINGS.",
        show_default=False,
    ),
]


def _propose_line(r: ProposeResult) -> str:
    to = f" (for {r.to})" if r.to else ""
    if r.action == "proposed":
        head = f"Proposed as #{r.number}{to}: {r.markdown}"
    elif r.action == "queued":
        head = f"Already in the inbox: {r.markdown}"
    elif r.action == "known":
        head = f"Already in the vault: {r.markdown}"
    else:
        head = f"Refused ({r.problem}): {r.markdown}"
    if r.updates and r.action == "proposed":
        head += f"\n  updates {r.updates}: {r.current}"
    return head


@app.command("propose")
def propose_command(
    line: Annotated[
        list[str],
        typer.Argument(help="The bullet: `handle — fact`; source and date are added if missing."),
    ],
    to: ToOpt = None,
    vault: VaultOpt = None,
    as_json: JsonOpt = False,
) -> None:
    """Queue a bullet in AI/INBOX.md for a person to approve (`brain inbox`).

    The caller becomes the source and today the date when they are missing; a line that is not a
    bullet or holds a credential is refused. Proposing what the vault has already adds nothing.
    """
    from brain.commands.propose import propose
    from brain.config import resolve_vault

    result = propose(resolve_vault(vault), " ".join(line), to=to)
    if as_json:
        render.out(render.dumps(render.doc(result)))
    else:
        render.out(_propose_line(result))


@app.command("inbox")
def inbox_command(
    action: Annotated[
        str | None,
        typer.Argument(help="approve or drop (default: list the queue).", show_default=False),
    ] = None,
    number: Annotated[
        int | None, typer.Argument(help="The proposal's number in the list.", show_default=False)
    ] = None,
    to: ToOpt = None,
    vault: VaultOpt = None,
    as_json: JsonOpt = False,
) -> None:
    """List the proposals waiting in AI/INBOX.md; `approve N` or `drop N` one of them.

    Approving moves a proposal into a core file (one for an existing handle replaces that bullet
    in place); dropping discards it. Approving reindexes but commits nothing: review and commit
    the vault yourself.
    """
    from brain.commands import inbox as inboxmod
    from brain.config import resolve_vault

    if action is None:
        if number is not None or to is not None:
            raise UsageError("nothing to do with a number alone", "brain inbox approve N")
        listing = inboxmod.inbox(resolve_vault(vault))
        if as_json:
            doc = render.doc(listing)
            doc["proposals"] = [render.doc(p) for p in listing.proposals]
            render.out(render.dumps(doc))
            return
        if listing.recovered:
            sys.stderr.write(f"finished an interrupted approval: {listing.recovered}\n")
        if not listing.proposals:
            render.out("The inbox is empty.")
            return
        lines = []
        for p in listing.proposals:
            to_note = f"  (for {p.to})" if p.to else ""
            lines.append(f"{p.number:>3}. {p.markdown}{to_note}")
            if p.problem:
                lines.append(f"     not a valid bullet: {p.problem}")
            elif p.updates:
                lines.append(f"     updates {p.updates}: {p.current}")
        n = len(listing.proposals)
        lines.append(
            f"{render.plural(n, 'proposal')} in {listing.path}: `brain inbox approve N "
            "[--to MEMORY|LEARNINGS|TUNINGS]` or `brain inbox drop N`"
        )
        render.out("\n".join(lines))
        return
    if action not in ("approve", "drop"):
        raise UsageError(f"unknown inbox action {action!r}", "use `approve N` or `drop N`")
    if number is None:
        raise UsageError(f"which proposal? brain inbox {action} N", "run `brain inbox` to list")
    path = resolve_vault(vault)
    if action == "drop":
        if to is not None:
            raise UsageError("--to goes with approve, not drop", f"brain inbox drop {number}")
        dropped = inboxmod.drop(path, number)
        if as_json:
            render.out(render.dumps(render.doc(dropped)))
        else:
            render.out(f"Dropped #{number}: {dropped.markdown} ({dropped.remaining} left)")
        return
    approved = inboxmod.approve(path, number, to)
    if as_json:
        render.out(render.dumps(render.doc(approved)))
        return
    verb = "Replaced" if approved.replaced else "Approved"
    lines = [f"{verb} #{number} in {approved.path}:{approved.line}: {approved.markdown}"]
    if approved.replaced:
        lines.append(f"  was: {approved.replaced}")
    lines.append(
        f"Index updated; {approved.remaining} left in the inbox. Not committed: {approved.commit}."
    )
    render.out("\n".join(lines))


@app.command("export")
def export_command(
    agents: Annotated[
        list[str],
        typer.Argument(
            help="claude, codex (or agents: AGENTS.md), copilot, gemini, cursor, cline, kiro, "
            "or all (with --check: every one this repository has).",
            show_default=False,
        ),
    ],
    check: Annotated[
        bool,
        typer.Option("--check", help="Write nothing; exit 1 when a file is out of date (CI)."),
    ] = False,
    project: Annotated[
        str | None,
        typer.Option(
            "--project", help="Pack this project (default: the repository's folder name)."
        ),
    ] = None,
    budget: Annotated[
        int | None,
        typer.Option("--budget", help="Token cap on the exported pack (default 1500)."),
    ] = None,
    vault: VaultOpt = None,
    as_json: JsonOpt = False,
) -> None:
    """Write this repository's pack into the file each agent reads (CLAUDE.md, AGENTS.md, ...).

    Shared files get a marked block replaced in place, the rest of the file untouched; files brain
    owns (.cursor/rules/brain.mdc, .clinerules/brain.md, .kiro/steering/brain.md) are written whole.
    """
    from brain.commands.export import export
    from brain.config import resolve_vault

    result = export(
        resolve_vault(vault), Path.cwd(), agents, project=project, budget=budget, check=check
    )
    if as_json:
        doc = render.doc(result)
        doc["targets"] = [render.doc(t) for t in result.targets]
        render.out(render.dumps(doc))
    else:
        checked = [t for t in result.targets if t.action != "absent"]
        lines = [f"{t.path}: {t.action}" for t in checked]
        if check:
            stale = sum(1 for t in checked if t.action != "current")
            if stale:
                again = f"brain export {' '.join(agents)}"
                lines.append(f"{render.plural(stale, 'file')} out of date; run `{again}`")
            elif checked:
                every = "" if len(checked) == 1 else "all "
                lines.append(f"{every}{render.plural(len(checked), 'file')} up to date")
            else:
                lines.append("nothing exported here yet; `brain export AGENT` writes one")
        render.out("\n".join(lines))
    raise typer.Exit(0 if result.ok else 1)


@app.command("import")
def import_command(
    source: Annotated[
        str,
        typer.Argument(
            help="`claude` (what Claude Code remembered for this repository) or a Markdown FILE.",
            show_default=False,
        ),
    ],
    memory_dir: Annotated[
        str | None,
        typer.Option("--dir", help="Claude Code's memory folder, when it is not the usual one."),
    ] = None,
    to: ToOpt = None,
    vault: VaultOpt = None,
    as_json: JsonOpt = False,
) -> None:
    """Propose what another tool remembered: Claude Code's memories, or any Markdown list.

    Everything goes through the inbox; importing the same thing twice proposes nothing new.
    """
    from brain.commands.import_ import import_claude, import_file
    from brain.config import resolve_vault

    path = resolve_vault(vault)
    if source == "claude":
        result = import_claude(path, Path.cwd(), Path(memory_dir) if memory_dir else None, to=to)
    else:
        if memory_dir:
            raise UsageError("--dir goes with `brain import claude`", f"brain import {source}")
        result = import_file(path, Path(source), to=to)
    if as_json:
        doc = render.doc(result)
        doc["items"] = [render.doc(i) for i in result.items]
        render.out(render.dumps(doc))
        return
    from brain.commands.inbox import FULL

    lines = [_propose_line(i) for i in result.items if i.problem != FULL]
    full = sum(1 for i in result.items if i.problem == FULL)
    if full:  # one line, not thousands: they all wait for the same thing
        lines.append(f"{render.plural(full, 'more item')} not proposed: {FULL}")
    if result.stripped:
        lines.append(
            f"{render.plural(result.stripped, 'control character')} (terminal escapes, NUL) "
            f"left out of what {result.origin} holds"
        )
    lines.append(
        f"{render.plural(result.proposed_count, 'proposal')} added to the inbox from "
        f"{result.origin} ({result.found_count} found); review them with `brain inbox`"
    )
    render.out("\n".join(lines))


def run(args: list[str]) -> int:
    """Run the app on `args`; return the exit code instead of exiting (cli.main owns that)."""
    from typer._click import exceptions as click_exc  # typer 0.28 vendors click

    command = typer.main.get_command(app)
    try:
        code = command.main(args, prog_name="brain", standalone_mode=False)
    except click_exc.NoArgsIsHelpError as exc:
        render.out(exc.ctx.get_help() if exc.ctx else "")
        return 0
    except click_exc.UsageError as exc:
        raise UsageError(exc.format_message(), "see `brain --help`") from None
    except click_exc.ClickException as exc:
        raise UsageError(exc.format_message(), "see `brain --help`") from None
    except typer.Abort:
        raise KeyboardInterrupt from None
    return code if isinstance(code, int) else 0


# -- what past sessions did: howto, lessons, day, week (brain.recall.history_cli) -------------

AgentOpt = Annotated[
    str | None, typer.Option("--agent", help="Only this agent's sessions (claude, codex, ...).")
]
NoGitOpt = Annotated[bool, typer.Option("--no-git", help="Leave the repositories' commits out.")]
ProjectOpt = Annotated[
    str | None, typer.Option("--project", help="Only this repository (its folder name).")
]
ProposeOpt = Annotated[bool, typer.Option("--propose", help="Queue it in the inbox (once).")]


@app.command("howto")
def howto_command(
    terms: Annotated[list[str], typer.Argument(help="The task, in plain words.")],
    limit: Annotated[int, typer.Option("--limit", "-n", help="At most this many commands.")] = 5,
    failed: Annotated[bool, typer.Option("--all", help="Show failed attempts too.")] = False,
    since: Annotated[
        str | None, typer.Option("--since", help="Only sessions from DATE on (2025-05-01, 30d).")
    ] = None,
    agent: AgentOpt = None,
    cwd: Annotated[
        str | None, typer.Option("--cwd", help="Only sessions in this folder or below.")
    ] = None,
    propose: ProposeOpt = False,
    to: ToOpt = None,
    vault: VaultOpt = None,
    as_json: JsonOpt = False,
) -> None:
    """The shell commands that did a task last time, from your agents' transcripts.

    The ones that worked, the last of near-identical ones, best first. Exit 1 when none did.
    """
    from brain.recall.history_cli import run_howto

    raise typer.Exit(
        run_howto(
            terms,
            limit=limit,
            failed=failed,
            since=since or "",
            agent=agent or "",
            cwd=cwd or "",
            propose=propose,
            to=to,
            vault=vault,
            as_json=as_json,
        )
    )


@app.command("lessons")
def lessons_command(
    since: Annotated[
        str, typer.Option("--since", help="Sessions from DATE on (2025-05-01, 7d, 2w).")
    ] = "7d",
    kind: Annotated[
        str | None, typer.Option("--kind", help="Only corrections or only retries.")
    ] = None,
    agent: AgentOpt = None,
    propose: Annotated[
        bool, typer.Option("--propose", help="Queue each for LEARNINGS (never twice).")
    ] = False,
    vault: VaultOpt = None,
    as_json: JsonOpt = False,
) -> None:
    """Corrections and retried commands from recent sessions, with the turns they came from.

    A correction is a person redirecting an agent; a retry is a command that failed and then
    worked another way.
    """
    from brain.recall.history_cli import run_lessons

    raise typer.Exit(
        run_lessons(
            since=since,
            kind=kind or "",
            agent=agent or "",
            propose=propose,
            vault=vault,
            as_json=as_json,
        )
    )


@app.command("day")
def day_command(
    day: Annotated[
        str | None, typer.Argument(help="YYYY-MM-DD, today or yesterday.", show_default=False)
    ] = None,
    no_git: NoGitOpt = False,
    project: ProjectOpt = None,
    agent: AgentOpt = None,
    as_json: JsonOpt = False,
) -> None:
    """What was worked on that day (default today), by repository.

    Sessions, files the agents wrote, and the commits made there.
    """
    from brain.recall.history_cli import run_day

    raise typer.Exit(
        run_day(
            day or "", git=not no_git, project=project or "", agent=agent or "", as_json=as_json
        )
    )


@app.command("week")
def week_command(
    since: Annotated[
        str, typer.Option("--since", help="From this day (7d: today and the 6 before, or a date).")
    ] = "7d",
    no_git: NoGitOpt = False,
    project: ProjectOpt = None,
    agent: AgentOpt = None,
    as_json: JsonOpt = False,
) -> None:
    """What was worked on, day by day, by repository: `brain day` for each day since --since."""
    from brain.recall.history_cli import run_week

    raise typer.Exit(
        run_week(since, git=not no_git, project=project or "", agent=agent or "", as_json=as_json)
    )
