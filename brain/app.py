"""The Typer app: parses arguments, calls a command module, hands its result to its presenter."""

from __future__ import annotations

import inspect
import sys
from collections.abc import Callable
from pathlib import Path
from typing import TYPE_CHECKING, Annotated, Any

import typer
from typer.core import TyperGroup

from brain import options, present
from brain import run as runner
from brain.errors import UsageError
from brain.present import emit, setup
from brain.present import inbox as present_inbox

if TYPE_CHECKING:
    pass

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


def _parameter(command: str, spec: tuple[Any, ...], option: bool) -> inspect.Parameter:
    """One Typer parameter of `command` from a brain.options declaration (an option or an
    argument)."""
    if option:
        flags, dest, kind, help_text = spec
        info: Any = typer.Option(*flags, help=help_text, hidden=help_text is None)
        default: object = options.default(command, dest, kind)
        hint: Any = bool if kind is bool else kind | None
    else:
        dest, arity, help_text = spec
        info = typer.Argument(help=help_text, show_default=False)
        hints: dict[str, Any] = {"1": str, "+": list[str], "?": str | None, "*": list[str] | None}
        hint = hints[arity]
        default = inspect.Parameter.empty if arity in ("1", "+") else None
    return inspect.Parameter(
        dest, inspect.Parameter.KEYWORD_ONLY, default=default, annotation=Annotated[hint, info]
    )


def declared(name: str) -> Callable[[Callable[..., None]], Callable[..., None]]:
    """Register the decorated function as command `name`, its arguments and options (flags, help,
    defaults) built from brain.options, the declaration brain.cli's fast path parses with too.
    The function takes them as keyword arguments, named as declared."""
    arguments, declared_options = options.COMMANDS[name]
    params = [_parameter(name, a, False) for a in arguments]
    params += [_parameter(name, o, True) for o in declared_options]

    def register(body: Callable[..., None]) -> Callable[..., None]:
        own = inspect.signature(body).parameters
        names = [p.name for p in params]
        if list(own) != names and [p.kind for p in own.values()] != [inspect.Parameter.VAR_KEYWORD]:
            raise TypeError(f"{body.__name__} takes {list(own)}; brain.options declares {names}")
        body.__signature__ = inspect.Signature(params)  # type: ignore[attr-defined]
        return app.command(name)(body)

    return register


# The options many commands share, from the same declaration as the fast path's.
VaultOpt = Annotated[str | None, typer.Option(*options.VAULT[0], help=options.VAULT[3])]
JsonOpt = Annotated[bool, typer.Option(*options.JSON[0], help=options.JSON[3])]
ToOpt = Annotated[str | None, typer.Option(*options.TO[0], help=options.TO[3])]


@declared("find")
def find_command(**opts: Any) -> None:
    """Find the bullets and notes that answer QUERY. Exit 1 when nothing matches, as grep does."""
    raise typer.Exit(runner.run_find(**opts))


@declared("reindex")
def reindex_command(**opts: Any) -> None:
    """Bring the index up to date with the vault (only changed files are read again)."""
    raise typer.Exit(runner.run_reindex(**opts))


@declared("sync")
def sync_command(**opts: Any) -> None:
    """Share the vault with your other machines over git: write down, receive, send.

    `status` says where sync stands, `connect URL` where the vault meets the other machines,
    `follow` takes the remote's history after someone rewrote it (a leaked file scrubbed),
    `off` and `on` stop and restart it for this vault on this machine (also BRAIN_SYNC=off).
    Exit 1 when something is left waiting: not connected, offline, a refused line, a conflict.
    """
    raise typer.Exit(runner.run_sync(**opts))


@declared("lint")
def lint_command(**opts: Any) -> None:
    """Check that every bullet parses, ends in a valid date, has a unique handle and no secret.

    Every line the index reads is checked by the guard too: hidden or bidi characters, words that
    mix scripts, images. `--strict` (or `lint: strict` in AI/config.yaml) holds bullets and
    synonyms to plain prose.
    """
    raise typer.Exit(runner.run_lint(**opts))


@declared("version")
def version_command(**opts: Any) -> None:
    """Print the release tag (or `dev` for a local build) and the commit it was built from."""
    raise typer.Exit(runner.run_version(**opts))


def _version_option(value: bool) -> None:
    if value:
        raise typer.Exit(runner.run_version(as_json=False))


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
    color: Annotated[
        str | None,
        typer.Option(
            "--color",
            metavar="auto|always|never",
            help="Colour for a person at a terminal (default: BRAIN_COLOR, else auto: none "
            "under NO_COLOR, for an agent or through a pipe). Before the command.",
        ),
    ] = None,
) -> None:
    pass  # --color is taken off the command line by brain.cli, for every command's path


@declared("secrets")
def secrets_command(**opts: Any) -> None:
    """Find credentials (API keys, tokens, private keys) in the vault. Exit 1 when any is found.

    Uses gitleaks as well when it is on PATH. The pre-commit hook runs `brain secrets --staged`.
    `--history` finds a credential committed once and deleted since, with the commit that added it.
    """
    raise typer.Exit(runner.run_secrets(**opts))


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
    vault: Annotated[
        str | None, typer.Option("--vault", help="The vault folder, as PATH (either one).")
    ] = None,
    dry_run: Annotated[
        bool,
        typer.Option("--dry-run", help="Say what install would write and run; write nothing."),
    ] = False,
    as_json: JsonOpt = False,
) -> None:
    """Set up the vault: record it, put brain on PATH, hook git and Claude Code, build the index.

    Running it again changes nothing; with another PATH it moves to that vault. `--dry-run`
    lists each file and folder it would write, what it would run and what is already in place.
    """
    from brain.commands.install import choose_vault, install, plan
    from brain.errors import BrainError

    if path and vault and Path(path).expanduser().resolve() != Path(vault).expanduser().resolve():
        raise UsageError(
            f"PATH {path} and --vault {vault} name two vaults", f"brain install {path}"
        )
    init = init or yes
    choice = choose_vault(path or vault)
    if dry_run:
        raise typer.Exit(emit(setup.install_plan(plan(choice, init=init), as_json=as_json)))
    if choice.needs_init and not init and not as_json and sys.stdin.isatty():
        init = typer.confirm(
            f"{choice.path} is not a git repository. Run `git init` there and use it as the vault?",
            default=False,
            err=True,
        )
        if not init:
            raise BrainError("nothing was installed", "pick another folder, or pass --init")
    raise typer.Exit(emit(setup.install(install(choice, init=init), as_json=as_json)))


@declared("uninstall")
def uninstall_command(**opts: Any) -> None:
    """Undo `brain install`: git hooks, brain's hooks in every agent, the PATH link, the record.

    The agents' hooks are the three install adds to each agent program: pack, prime and settle
    (at session start, each prompt, each stop). It also stops the background workers and deletes
    every index and cached pack. The vault and its history are left alone; a core.hooksPath
    another tool had set is restored; the line the installer added to your shell profile and the
    state brain leaves (your usage log, recall's transcripts, your settings) are named, with what
    removes them.
    """
    raise typer.Exit(runner.run_uninstall(**opts))


@declared("hooks")
def hooks_command(**opts: Any) -> None:
    """Turn brain's hooks on or off in your agents, or show which are on.

    Three hooks per agent program: `brain pack` when a session starts, `brain prime` on each
    prompt, `brain settle` when a turn ends, each in the program's own hook config beside what
    is there. `on` registers them in Claude Code and every other agent found on this machine (or
    the one --harness names); `off` removes only brain's entries; a config that does not parse is
    left as it is and named.
    """
    raise typer.Exit(runner.run_hooks(**opts))


@declared("pack")
def pack_command(**opts: Any) -> None:
    """Print the briefing an agent opens a project with, within --budget tokens.

    The project's bullets, the working rules, the newest handoff and the state folder; Claude
    Code's SessionStart hook runs it. With no PROJECT it packs the repository you are in; a
    repository the vault knows nothing about prints nothing and exits 0.
    """
    raise typer.Exit(runner.run_pack(**opts))


@declared("settle")
def settle_command(**opts: Any) -> None:
    """Ask an agent, once per session, to propose what it settled before it stops.

    The agents' stop hook (`brain hooks on` registers it): it reads the stop event on stdin and,
    when the session wrote files and proposed nothing, prints `{"decision": "block", "reason":
    ...}` naming the files and the corrections the user made. Otherwise it prints nothing. It
    always exits 0.
    """
    raise typer.Exit(runner.run_settle(**opts))


@declared("prime")
def prime_command(**opts: Any) -> None:
    """Print what the vault holds on a prompt, for the agent about to answer it.

    Claude Code's UserPromptSubmit hook runs it with the hook's JSON on stdin. Only what stands
    out is served, each unit once per session, within the budget and the deadline
    (BRAIN_PRIME_DEADLINE, default 1 s); it always exits 0 and prints nothing rather than late.
    """
    raise typer.Exit(runner.run_prime(**opts))


# The modes `brain recall` took as options before they were subcommands: old spelling -> takes a
# value. `brain recall --full ID` still works, as `brain recall full ID`.
_RECALL_MODES = {
    "--full": True,
    "--sessions": False,
    "--sync": False,
    "--sources": False,
    "--enable": True,
    "--disable": True,
}


class _RecallGroup(TyperGroup):
    """`brain recall QUERY` is `brain recall search QUERY`; a mode in its old spelling (`--sync`,
    `--full ID`, ...) is the subcommand of the same word."""

    def parse_args(self, ctx: Any, args: list[str]) -> list[str]:
        return super().parse_args(ctx, self.rewrite(args))

    def rewrite(self, args: list[str]) -> list[str]:
        if not args or args[0] in self.commands:
            return args
        head = args[: args.index("--")] if "--" in args else args
        for at, arg in enumerate(head):
            name, eq, value = arg.partition("=")
            if name in _RECALL_MODES:
                after = 1 if _RECALL_MODES[name] and not eq else 0  # its value, the next arg
                word = [name[2:], *([value] if eq else args[at + 1 : at + 1 + after])]
                return [*word, *args[:at], *args[at + 1 + after :]]
        if any(a in ("-h", "--help") for a in head) and not any(
            not a.startswith("-") for a in head
        ):
            return args  # `brain recall --help`: the group's help, listing the subcommands
        return ["search", *args]


recall_app = typer.Typer(
    name="recall",
    cls=_RecallGroup,
    no_args_is_help=True,
    context_settings={"help_option_names": ["-h", "--help"]},
)
app.add_typer(recall_app)


@recall_app.callback()
def recall_command() -> None:
    """Search what was said in your agents' transcripts (opt in per agent with `enable`).

    `brain recall QUERY` searches (as `brain recall search QUERY`); `brain recall sessions`
    lists sessions, not turns. Transcripts stay in transcripts.db in the state dir, never in the
    vault. The old spellings (`--full ID`, `--sessions`, `--sync`, `--sources`, `--enable NAME`,
    `--disable NAME`) still work.
    """


def _recall(**kwargs: Any) -> None:
    from brain.run import run_recall

    raise typer.Exit(run_recall(**{"query": [], "progress": runner.progress_bar, **kwargs}))


# The filters of a search of the transcripts, shared by `recall search` and `recall sessions`.
RecallAllOpt = Annotated[
    bool, typer.Option("--all", help="Include the current session (excluded by default).")
]
TurnsSinceOpt = Annotated[
    str | None, typer.Option("--since", help="Only turns from DATE on (2025-05-01, 7d).")
]
RecallAgentOpt = Annotated[
    str | None, typer.Option("--agent", help="Only this agent's turns (claude, codex, ...).")
]
RecallCwdOpt = Annotated[
    str | None, typer.Option("--cwd", help="Only turns from sessions in this folder or below.")
]


@recall_app.command("search")
def recall_search_command(
    query: Annotated[list[str], typer.Argument(help="What was said, in plain words.")],
    all_sessions: RecallAllOpt = False,
    limit: Annotated[int, typer.Option("--limit", "-n", help="At most this many hits.")] = 10,
    since: TurnsSinceOpt = None,
    agent: RecallAgentOpt = None,
    cwd: RecallCwdOpt = None,
    as_json: JsonOpt = False,
) -> None:
    """Ranked snippets of the turns that match QUERY, one line per hit. Exit 1 when none does."""
    _recall(
        query=query,
        all_sessions=all_sessions,
        limit=limit,
        since=since or "",
        agent=agent or "",
        cwd=cwd or "",
        as_json=as_json,
    )


AgentArg = Annotated[
    str,
    typer.Argument(help="claude, codex, gemini, copilot, opencode or pi.", show_default=False),
]


@recall_app.command("full")
def recall_full_command(
    turn: Annotated[
        str, typer.Argument(help="The turn's id as listed, or any unique start of it.")
    ],
    as_json: JsonOpt = False,
) -> None:
    """Print one turn in full, by its id."""
    _recall(full=turn, as_json=as_json)


@recall_app.command("sessions")
def recall_sessions_command(
    query: Annotated[
        list[str] | None,
        typer.Argument(help="Only sessions that said this, best first (default: the newest)."),
    ] = None,
    all_sessions: RecallAllOpt = False,
    limit: Annotated[int, typer.Option("--limit", "-n", help="At most this many sessions.")] = 20,
    since: TurnsSinceOpt = None,
    agent: RecallAgentOpt = None,
    cwd: RecallCwdOpt = None,
    as_json: JsonOpt = False,
) -> None:
    """List sessions, not turns: each with its agent, id, title, folder and turns. Exit 1: none.

    With QUERY, the sessions whose turns match it, best first, each led by its best turn's id
    (`brain recall full ID`); without, the newest first.
    """
    from brain import caller
    from brain.commands import recall as cmd
    from brain.present import recall as present

    who = caller.detect()
    text = runner.argv_text(" ".join(query or []).strip())
    with runner.progress_bar("Reading transcripts", enabled=not as_json) as bar:
        result = cmd.sessions(
            text,
            limit=limit,
            since=since or "",
            agent=agent or "",
            cwd=cwd or "",
            exclude_session="" if all_sessions else who.session,
            progress=bar,
        )
    raise typer.Exit(emit(present.sessions(result, who, as_json=as_json)))


@recall_app.command("sync")
def recall_sync_command(as_json: JsonOpt = False) -> None:
    """Read every enabled transcript again from the start (normally automatic and incremental)."""
    _recall(sync=True, as_json=as_json)


@recall_app.command("sources")
def recall_sources_command(as_json: JsonOpt = False) -> None:
    """List the adapters, where they read, and which are enabled."""
    _recall(sources=True, as_json=as_json)


@recall_app.command("enable")
def recall_enable_command(agent: AgentArg, as_json: JsonOpt = False) -> None:
    """Opt in to an agent's transcripts (once)."""
    _recall(enable=agent, as_json=as_json)


@recall_app.command("disable")
def recall_disable_command(agent: AgentArg, as_json: JsonOpt = False) -> None:
    """Opt out of an agent; its turns are deleted from recall."""
    _recall(disable=agent, as_json=as_json)


@declared("update")
def update_command(**opts: Any) -> None:
    """Install the newest release (signature and checksums verified), then run `brain doctor`.

    Only an installation made by install.sh or install.ps1 updates itself; a local build (`dev`)
    never does. Set BRAIN_NO_UPDATE=1 to silence the once-a-day notice.
    """
    raise typer.Exit(runner.run_update(**opts))


@declared("ledger")
def ledger_command(**opts: Any) -> None:
    """Show the tokens returned per caller, session and day, and the tokens saved.

    Saved: against reading the core files whole for every lookup.
    """
    raise typer.Exit(runner.run_ledger(**opts))


@declared("log")
def log_command(**opts: Any) -> None:
    """List the finds that returned nothing and still do: the backlog for bullets and synonyms."""
    raise typer.Exit(runner.run_log(**opts))


@declared("doctor")
def doctor_command(**opts: Any) -> None:
    """Check the vault, git hooks, index, model, SQLite and brain's hooks in your agents.

    The agents' hooks are the three install adds to each agent program found (pack, prime and
    settle). Exit 1 when one is broken. Also lists bullets to promote, older notes to update and
    near-duplicate bullets.
    """
    raise typer.Exit(runner.run_doctor(**opts))


@declared("verify")
def verify_command(**opts: Any) -> None:
    """Check the claims bullets make that this machine can: paths, files, commands, commits.

    Each claim passed, failed, or cannot check (a path on another machine, a repository not
    here). Exit 1 when a claim failed.
    """
    raise typer.Exit(runner.run_verify(**opts))


@declared("learn")
def learn_command(**opts: Any) -> None:
    """Propose as aliases the words people search with that reach a bullet only by its body.

    Also lists the aliases no logged query used. `--apply` writes the proposed aliases.
    """
    raise typer.Exit(runner.run_learn(**opts))


@declared("tend")
def tend_command(**opts: Any) -> None:
    """Sweep the vault: queue hygiene items in the inbox for a person.

    Hygiene items (aliases searches reached a bullet by, mark a note superseded, drop a bullet
    whose claims failed, merge bullets that say the same thing, date verified bullets) wait in
    `brain inbox`; `brain inbox approve N` applies. `aliases: apply` in AI/config.yaml writes the
    aliases at once instead. `--quick` is the daily sweep's bounded pass, run now with its report;
    BRAIN_NO_TEND=1 keeps the hooks from starting the daily one.
    """
    raise typer.Exit(runner.run_tend(**opts))


@declared("review")
def review_command(**opts: Any) -> None:
    """When a proposal starts answering finds: `before` a person approves it, or `after`.

    `after`: a proposal answers at once, marked unreviewed in every output, until approved or
    dropped. Stored in the vault's AI/config.yaml (committed) so every machine agrees.
    """
    raise typer.Exit(runner.run_review(**opts))


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

    Listens on 127.0.0.1 only, behind a token your browser gets from a file only you can read.
    Stops after an idle hour or Ctrl-C.
    """
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


@declared("locate")
def locate_command(**opts: Any) -> None:
    """Print where a bullet lives (path:line) and its line as written; exit 1 when none matches.

    With no HANDLE, the vault's folder (where those paths start), as every command finds it.
    """
    raise typer.Exit(runner.run_locate(**opts))


@app.command("mcp")
def mcp_command(
    vault: VaultOpt = None,
    http: Annotated[
        bool, typer.Option("--http", help="Serve on streamable HTTP behind a token, not stdio.")
    ] = False,
    port: Annotated[
        int | None,
        typer.Option("--port", help="With --http: the port (default 8417; 0: any free one)."),
    ] = None,
    host: Annotated[
        str | None,
        typer.Option("--host", help="With --http: the address to listen on (default 127.0.0.1)."),
    ] = None,
    allow_host: Annotated[
        list[str] | None,
        typer.Option(
            "--allow-host", help="With --http: another name clients call it by (Host header)."
        ),
    ] = None,
) -> None:
    """Serve brain's tools (find, recall, pack, propose, locate) over MCP on stdio, for agents.

    Register it with your agent, e.g. `claude mcp add --scope user brain -- brain mcp`.
    With --http: on http://127.0.0.1:8417/mcp, behind a token in a file only you can read;
    it prints how to register it.
    """
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
        return
    from brain.mcp_server import DEFAULT_PORT, serve_http

    serve_http(
        vault,
        host or "127.0.0.1",
        DEFAULT_PORT if port is None else port,
        tuple(allow_host or ()),
        lambda listening: present.err(setup.mcp_http(listening)),
    )


@declared("propose")
def propose_command(**opts: Any) -> None:
    """Queue a bullet in AI/INBOX.md for a person to approve (`brain inbox`).

    The caller becomes the source and today the date when they are missing; a line that is not a
    bullet or holds a credential is refused. Proposing what the vault has already adds nothing.
    A handle a bullet already has is refused unless --force says the line corrects that bullet.
    With `proposals: team` in AI/config.yaml it goes to the shared remote as a branch of its own.
    """
    raise typer.Exit(runner.run_propose(**opts))


inbox_app = typer.Typer(
    name="inbox",
    invoke_without_command=True,
    context_settings={"help_option_names": ["-h", "--help"]},
)
app.add_typer(inbox_app)

NumbersArg = Annotated[
    list[str],
    typer.Argument(
        help="Proposals by their number in `brain inbox`: N, a range N-M, or all.",
        metavar="N...",
        show_default=False,
    ),
]


@inbox_app.callback()
def inbox_command(ctx: typer.Context, vault: VaultOpt = None, as_json: JsonOpt = False) -> None:
    """List the proposals waiting in AI/INBOX.md; `approve` or `drop` them by number.

    Approving moves a proposal into a core file (one for an existing handle replaces that bullet
    in place); dropping discards it. Approving reindexes but commits nothing: review and commit
    the vault yourself.
    """
    if ctx.invoked_subcommand is not None:
        return
    from brain.commands import inbox as inboxmod
    from brain.config import resolve_vault

    emit(present_inbox.inbox(inboxmod.inbox(resolve_vault(vault)), as_json=as_json))


def _inbox_context(ctx: typer.Context, vault: str | None, as_json: bool) -> tuple[Path, bool]:
    """The vault and --json of `brain inbox approve|drop`, given after the subcommand or before
    it (`brain inbox --vault V drop 2`)."""
    from brain.config import resolve_vault

    given = ctx.parent.params if ctx.parent else {}
    return resolve_vault(vault or given.get("vault")), as_json or bool(given.get("as_json"))


def _one_number(words: list[str]) -> bool:
    """`approve 3`, answered as before; several, a range or all get a list."""
    return len(words) == 1 and words[0].isdecimal()


@inbox_app.command("approve")
def inbox_approve_command(
    ctx: typer.Context,
    numbers: NumbersArg,
    to: ToOpt = None,
    vault: VaultOpt = None,
    as_json: JsonOpt = False,
) -> None:
    """Move proposals into a core file, in the order listed; commit the vault yourself.

    Every proposal named is checked first: a wrong number or one that cannot be approved changes
    nothing. Numbers are those `brain inbox` lists before the command (`approve 1-3`, `approve
    all`). A proposal branch of the shared remote (`proposals: team`) is merged there and pushed.
    """
    from brain.commands import inbox as inboxmod

    path, as_json = _inbox_context(ctx, vault, as_json)
    results = inboxmod.approve_many(path, numbers, to)
    emit(present_inbox.approved(results, one=_one_number(numbers), as_json=as_json))


@inbox_app.command("drop")
def inbox_drop_command(
    ctx: typer.Context,
    numbers: NumbersArg,
    vault: VaultOpt = None,
    as_json: JsonOpt = False,
) -> None:
    """Discard proposals: all of those named at once, or none when a number is wrong.

    Numbers are those `brain inbox` lists before the command (`drop 1 2`, `drop 3-5`, `drop all`).
    """
    from brain.commands import inbox as inboxmod

    path, as_json = _inbox_context(ctx, vault, as_json)
    results = inboxmod.drop_many(path, numbers)
    emit(present_inbox.dropped(results, one=_one_number(numbers), as_json=as_json))


@declared("export")
def export_command(**opts: Any) -> None:
    """Write this repository's pack into the file each agent reads (CLAUDE.md, AGENTS.md, ...).

    Shared files get a marked block replaced in place, the rest of the file untouched; files brain
    owns (.cursor/rules/brain.mdc, .clinerules/brain.md, .kiro/steering/brain.md) are written whole.
    An agent that reads one of several files (zed, warp, junie) gets it in the one it reads now.
    """
    raise typer.Exit(runner.run_export(**opts))


@declared("import")
def import_command(**opts: Any) -> None:
    """Propose what another tool remembered: Claude Code's memories, or any Markdown list.

    Everything goes through the inbox; importing the same thing twice proposes nothing new.
    """
    raise typer.Exit(runner.run_import(**opts))


def run(args: list[str]) -> int:
    """Run the app on `args`; return the exit code instead of exiting (cli.main owns that)."""
    from typer._click import exceptions as click_exc  # typer 0.28 vendors click

    command = typer.main.get_command(app)
    try:
        code = command.main(args, prog_name="brain", standalone_mode=False)
    except click_exc.NoArgsIsHelpError as exc:
        present.out(exc.ctx.get_help() if exc.ctx else "")
        return 0
    except click_exc.UsageError as exc:
        raise UsageError(exc.format_message(), "see `brain --help`") from None
    except click_exc.ClickException as exc:
        raise UsageError(exc.format_message(), "see `brain --help`") from None
    except typer.Abort:
        raise KeyboardInterrupt from None
    return code if isinstance(code, int) else 0


# -- what past sessions did: howto, lessons, day, week (brain.run) -------------


@declared("howto")
def howto_command(**opts: Any) -> None:
    """The shell commands that did a task last time, from your agents' transcripts.

    The ones that worked, the last of near-identical ones, best first. Exit 1 when none did.
    """
    raise typer.Exit(runner.run_howto(**opts))


@declared("lessons")
def lessons_command(**opts: Any) -> None:
    """Corrections and retried commands from recent sessions, with the turns they came from.

    A correction is a person redirecting an agent; a retry is a command that failed and then
    worked another way.
    """
    raise typer.Exit(runner.run_lessons(**opts))


@declared("day")
def day_command(**opts: Any) -> None:
    """What was worked on that day (default today), by repository.

    Sessions, files the agents wrote, and the commits made there.
    """
    raise typer.Exit(runner.run_day(**opts))


@declared("week")
def week_command(**opts: Any) -> None:
    """What was worked on, day by day, by repository: `brain day` for each day since --since."""
    raise typer.Exit(runner.run_week(**opts))
