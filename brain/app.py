"""The Typer app: each command and subcommand built from its brain.options declaration, its help
text the docstring here, its parsed options handed to its runner in brain.run (`declared`)."""

from __future__ import annotations

import inspect
from collections.abc import Callable
from typing import Annotated, Any

import typer
from typer.core import TyperGroup

from brain import options, present
from brain import run as runner
from brain.errors import UsageError

HELP = {"help_option_names": ["-h", "--help"]}  # every command and group answers -h too
app = typer.Typer(
    name="brain",
    help=(
        "A local-first memory for coding agents. The vault is a git repository of Markdown; "
        "a disposable SQLite index (FTS5) in the state dir makes it fast to search."
    ),
    no_args_is_help=True,
    add_completion=False,
    pretty_exceptions_enable=False,
    context_settings=HELP,
)


class _RecallGroup(TyperGroup):
    """`brain recall QUERY` is `brain recall search QUERY`; a mode in its old spelling (`--sync`,
    `--full ID`, ...) is the subcommand of the same word (brain.options.recall_args)."""

    def parse_args(self, ctx: Any, args: list[str]) -> list[str]:
        return super().parse_args(ctx, options.recall_args(args))


recall_app = typer.Typer(
    name="recall",
    cls=_RecallGroup,
    no_args_is_help=True,
    context_settings=HELP,
)
app.add_typer(recall_app)
inbox_app = typer.Typer(
    name="inbox",
    invoke_without_command=True,
    context_settings=HELP,
)
app.add_typer(inbox_app)
# The Typer app of each group in brain.options.COMMANDS ("" is brain itself).
_GROUPS = {"": app, "recall": recall_app, "inbox": inbox_app}


def _parameter(
    command: str, spec: tuple[Any, ...], option: bool, eager: Callable[..., Any] | None
) -> inspect.Parameter:
    """One Typer parameter of `command` from a brain.options declaration (an option or an
    argument); `eager`: the option's callback, run as soon as it is parsed (--version)."""
    metavar = options.METAVARS.get(command, {}).get(spec[1] if option else spec[0])
    if option:
        flags, dest, kind, help_text = spec
        info: Any = typer.Option(
            *flags,
            help=help_text,
            hidden=help_text is None,
            metavar=metavar,
            callback=eager,
            is_eager=eager is not None,
        )
        default: object = options.default(command, dest, kind)
        hint: Any = {bool: bool, list: list[str] | None}.get(kind, kind | None)
    else:
        dest, arity, help_text = spec
        info = typer.Argument(help=help_text, show_default=False, metavar=metavar)
        hints: dict[str, Any] = {"1": str, "+": list[str], "?": str | None, "*": list[str] | None}
        hint = hints[arity]
        default = inspect.Parameter.empty if arity in ("1", "+") else None
    return inspect.Parameter(
        dest, inspect.Parameter.KEYWORD_ONLY, default=default, annotation=Annotated[hint, info]
    )


def _runner(name: str) -> str:
    """The runner in brain.run of command `name`: run_find, run_inbox_approve."""
    return "run_" + name.replace(" ", "_")


def declared(
    name: str, *, eager: dict[str, Callable[..., Any]] | None = None
) -> Callable[[Callable[..., None]], Callable[..., None]]:
    """Register command `name` (a brain.options.COMMANDS key: "find", "inbox approve", a group's
    "inbox", or "" for brain's own options): its arguments and options (flags, help, defaults)
    built from brain.options, the declaration brain.cli's fast path parses with too, its help
    the decorated function's docstring, and its runner brain.run.run_NAME (run_inbox_approve),
    which takes them as keyword arguments, named as declared, and returns the exit code. A
    group's runner runs when no subcommand is given; a subcommand's option that its group
    declares too may come before the subcommand (`brain inbox --vault V drop 2`)."""
    arguments, declared_options = options.COMMANDS[name]
    params = [_parameter(name, a, False, None) for a in arguments]
    params += [_parameter(name, o, True, (eager or {}).get(o[1])) for o in declared_options]
    context = inspect.Parameter("ctx", inspect.Parameter.KEYWORD_ONLY, annotation=typer.Context)
    group, _, word = name.rpartition(" ")

    def register(body: Callable[..., None]) -> Callable[..., None]:
        if inspect.signature(body).parameters:
            raise TypeError(f"{body.__name__} is help text: brain.run.{_runner(name)} runs it")

        def call(ctx: typer.Context, **opts: Any) -> None:
            run = getattr(runner, _runner(name), None)  # looked up now: tests replace it
            if run is None or (name in _GROUPS and ctx.invoked_subcommand is not None):
                return  # a group with nothing of its own to run, or its subcommand's turn
            given = ctx.parent.params if group and ctx.parent else {}
            opts = {k: given[k] if not v and given.get(k) else v for k, v in opts.items()}
            try:
                code = run(**opts)
            except KeyboardInterrupt:
                raise _Interrupted from None
            raise typer.Exit(code)

        call.__doc__ = body.__doc__
        call.__signature__ = inspect.Signature([context, *params])  # type: ignore[attr-defined]
        if name in _GROUPS:
            _GROUPS[name].callback()(call)
        else:
            _GROUPS[group].command(word)(call)
        return body

    return register


@declared("find")
def find_command() -> None:
    """Find the bullets and notes that answer QUERY. Exit 1 when nothing matches, as grep does."""


@declared("reindex")
def reindex_command() -> None:
    """Bring the index up to date with the vault (only changed files are read again)."""


@declared("sync")
def sync_command() -> None:
    """Share the vault with your other machines over git: write down, receive, send.

    `status` says where sync stands, `connect URL` where the vault meets the other machines,
    `follow` takes the remote's history after someone rewrote it (a leaked file scrubbed),
    `off` and `on` stop and restart it for this vault on this machine (also BRAIN_SYNC=off).
    Exit 1 when something is left waiting: not connected, offline, a refused line, a conflict.
    """


@declared("lint")
def lint_command() -> None:
    """Check that every bullet parses, ends in a valid date, has a unique handle and no secret.

    Every line the index reads is checked by the guard too: hidden or bidi characters, words that
    mix scripts, images. `--strict` (or `lint: strict` in AI/config.yaml) holds bullets and
    synonyms to plain prose.
    """


@declared("version")
def version_command() -> None:
    """Print the release tag (or `dev` for a local build) and the commit it was built from."""


def _version_option(value: bool) -> None:
    """`brain --version`: the version command's runner, before any command is looked for."""
    if value:
        raise typer.Exit(runner.run_version(as_json=False))


@declared("", eager={"version": _version_option})
def _options() -> None:
    pass  # --color is taken off the command line by brain.cli, for every command's path


@declared("secrets")
def secrets_command() -> None:
    """Find credentials (API keys, tokens, private keys) in the vault. Exit 1 when any is found.

    Uses gitleaks as well when it is on PATH. The pre-commit hook runs `brain secrets --staged`.
    `--history` finds a credential committed once and deleted since, with the commit that added it.
    """


@declared("install")
def install_command() -> None:
    """Set up the vault: record it, put brain on PATH, hook git and Claude Code, build the index.

    Running it again changes nothing; with another PATH it moves to that vault. `--dry-run`
    lists each file and folder it would write, what it would run and what is already in place.
    """


@declared("uninstall")
def uninstall_command() -> None:
    """Undo `brain install`: git hooks, brain's hooks in every agent, the PATH link, the record.

    The agents' hooks are the three install adds to each agent program: pack, prime and settle
    (at session start, each prompt, each stop). It also stops the background workers and deletes
    every index and cached pack. The vault and its history are left alone; a core.hooksPath
    another tool had set is restored; the line the installer added to your shell profile and the
    state brain leaves (your usage log, recall's transcripts, your settings) are named, with what
    removes them.
    """


@declared("hooks")
def hooks_command() -> None:
    """Turn brain's hooks on or off in your agents, or show which are on.

    Three hooks per agent program: `brain pack` when a session starts, `brain prime` on each
    prompt, `brain settle` when a turn ends, each in the program's own hook config beside what
    is there. `on` registers them in Claude Code and every other agent found on this machine (or
    the one --harness names); `off` removes only brain's entries; a config that does not parse is
    left as it is and named.
    """


@declared("pack")
def pack_command() -> None:
    """Print the briefing an agent opens a project with, within --budget tokens.

    The project's bullets, the working rules, the newest handoff and the state folder; Claude
    Code's SessionStart hook runs it. With no PROJECT it packs the repository you are in; a
    repository the vault knows nothing about gets one line on how to ask brain and the working
    rules.
    """


@declared("settle")
def settle_command() -> None:
    """Ask an agent, once per session, to propose what it settled before it stops.

    The agents' stop hook (`brain hooks on` registers it): it reads the stop event on stdin and,
    when the session wrote files and proposed nothing, prints `{"decision": "block", "reason":
    ...}` naming the files and the corrections the user made. Otherwise it prints nothing. It
    always exits 0.
    """


@declared("prime")
def prime_command() -> None:
    """Print what the vault holds on a prompt, for the agent about to answer it.

    Claude Code's UserPromptSubmit hook runs it with the hook's JSON on stdin. Only what stands
    out is served, each unit once per session, within the budget and the deadline
    (BRAIN_PRIME_DEADLINE, default 1 s); it always exits 0 and prints nothing rather than late.
    """


@declared("recall")
def recall_command() -> None:
    """Search what was said in your agents' transcripts (opt in per agent with `enable`).

    `brain recall QUERY` searches (as `brain recall search QUERY`); `brain recall sessions`
    lists sessions, not turns. Transcripts stay in transcripts.db in the state dir, never in the
    vault. The old spellings (`--full ID`, `--sessions`, `--sync`, `--sources`, `--enable NAME`,
    `--disable NAME`) still work.
    """


@declared("recall search")
def recall_search_command() -> None:
    """Ranked snippets of the turns that match QUERY, one line per hit. Exit 1 when none does."""


@declared("recall full")
def recall_full_command() -> None:
    """Print one turn in full, by its id."""


@declared("recall sessions")
def recall_sessions_command() -> None:
    """List sessions, not turns: each with its agent, id, title, folder and turns. Exit 1: none.

    With QUERY, the sessions whose turns match it, best first, each led by its best turn's id
    (`brain recall full ID`); without, the newest first.
    """


@declared("recall sync")
def recall_sync_command() -> None:
    """Read every enabled transcript again from the start (normally automatic and incremental)."""


@declared("recall sources")
def recall_sources_command() -> None:
    """List the adapters, where they read, and which are enabled."""


@declared("recall enable")
def recall_enable_command() -> None:
    """Opt in to an agent's transcripts (once)."""


@declared("recall disable")
def recall_disable_command() -> None:
    """Opt out of an agent; its turns are deleted from recall."""


@declared("update")
def update_command() -> None:
    """Install the newest release (signature and checksums verified), then run `brain doctor`.

    Only an installation made by install.sh or install.ps1 updates itself; a local build (`dev`)
    never does. Set BRAIN_NO_UPDATE=1 to silence the once-a-day notice.
    """


@declared("ledger")
def ledger_command() -> None:
    """Show the tokens returned per caller, session and day, and the tokens saved.

    Saved: against reading the core files whole for every lookup.
    """


@declared("log")
def log_command() -> None:
    """List the finds where nothing stood out and still nothing does: bullets to write."""


@declared("doctor")
def doctor_command() -> None:
    """Check the vault, git hooks, index, model, SQLite and brain's hooks in your agents.

    The agents' hooks are the three install adds to each agent program found (pack, prime and
    settle). Exit 1 when one is broken. Also lists bullets to promote, older notes to update and
    near-duplicate bullets.
    """


@declared("verify")
def verify_command() -> None:
    """Check the claims bullets make that this machine can: paths, files, commands, commits.

    Each claim passed, failed, or cannot check (a path on another machine, a repository not
    here). Exit 1 when a claim failed.
    """


@declared("learn")
def learn_command() -> None:
    """Propose as aliases the words people search with that reach a bullet only by its body.

    Also lists the aliases no logged query used. `--apply` writes the proposed aliases.
    """


@declared("tend")
def tend_command() -> None:
    """Sweep the vault: queue hygiene items in the inbox for a person.

    Hygiene items (aliases searches reached a bullet by, mark a note superseded, drop a bullet
    whose claims failed, merge bullets that say the same thing, date verified bullets) wait in
    `brain inbox`; `brain inbox approve N` applies. `aliases: apply` in AI/config.yaml writes the
    aliases at once instead. `--quick` is the daily sweep's bounded pass, run now with its report;
    BRAIN_NO_TEND=1 keeps the hooks from starting the daily one.
    """


@declared("review")
def review_command() -> None:
    """When a proposal starts answering finds: `before` a person approves it, or `after`.

    `after`: a proposal answers at once, marked unreviewed in every output, until approved or
    dropped. Stored in the vault's AI/config.yaml (committed) so every machine agrees.
    """


@declared("desk")
def desk_command() -> None:
    """Open the desk: a local web page to review the inbox, misses, ledger, health and search.

    Listens on 127.0.0.1 only, behind a token your browser gets from a file only you can read.
    Stops after an idle hour or Ctrl-C.
    """


@declared("locate")
def locate_command() -> None:
    """Print where a bullet lives (path:line) and its line as written; exit 1 when none matches.

    With no HANDLE, the vault's folder (where those paths start), as every command finds it.
    """


@declared("mcp")
def mcp_command() -> None:
    """Serve brain's tools (find, recall, pack, propose, locate) over MCP on stdio, for agents.

    Register it with your agent, e.g. `claude mcp add --scope user brain -- brain mcp`.
    With --http: on http://127.0.0.1:8417/mcp, behind a token in a file only you can read;
    it prints how to register it.
    """


@declared("propose")
def propose_command() -> None:
    """Queue a bullet in AI/INBOX.md for a person to approve (`brain inbox`).

    The caller becomes the source and today the date when they are missing; a line that is not a
    bullet or holds a credential is refused. Proposing what the vault has already adds nothing.
    A handle a bullet already has is refused unless --force says the line corrects that bullet.
    With `proposals: team` in AI/config.yaml it goes to the shared remote as a branch of its own.
    """


@declared("inbox")
def inbox_command() -> None:
    """List the proposals waiting in AI/INBOX.md; `approve` or `drop` them by number.

    Approving moves a proposal into a core file (one for an existing handle replaces that bullet
    in place); dropping discards it. Approving reindexes but commits nothing: review and commit
    the vault yourself.
    """


@declared("inbox approve")
def inbox_approve_command() -> None:
    """Move proposals into a core file, in the order listed; commit the vault yourself.

    Every proposal named is checked first: a wrong number or one that cannot be approved changes
    nothing. Numbers are those `brain inbox` lists before the command (`approve 1-3`, `approve
    all`). A proposal branch of the shared remote (`proposals: team`) is merged there and pushed.
    """


@declared("inbox drop")
def inbox_drop_command() -> None:
    """Discard proposals: all of those named at once, or none when a number is wrong.

    Numbers are those `brain inbox` lists before the command (`drop 1 2`, `drop 3-5`, `drop all`).
    """


@declared("export")
def export_command() -> None:
    """Write this repository's pack into the file each agent reads (CLAUDE.md, AGENTS.md, ...).

    Shared files get a marked block replaced in place, the rest of the file untouched; files brain
    owns (.cursor/rules/brain.mdc, .clinerules/brain.md, .kiro/steering/brain.md) are written whole.
    An agent that reads one of several files (zed, warp, junie) gets it in the one it reads now.
    """


@declared("import")
def import_command() -> None:
    """Propose what another tool remembered: Claude Code's memories, or any Markdown list.

    Everything goes through the inbox; importing the same thing twice proposes nothing new.
    """


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
    except (typer.Abort, _Interrupted):
        raise KeyboardInterrupt from None
    return code if isinstance(code, int) else 0


class _Interrupted(Exception):
    """A Ctrl-C inside a command's runner, carried past Typer (which would turn it into a silent
    exit 130: typer/core.py `_main`) to brain.cli, which says `brain: interrupted`."""


# -- what past sessions did: howto, lessons, day, week (brain.run) -------------


@declared("howto")
def howto_command() -> None:
    """The shell commands that did a task last time, from your agents' transcripts.

    The ones that worked, the last of near-identical ones, best first. Exit 1 when none did.
    """


@declared("lessons")
def lessons_command() -> None:
    """Corrections and retried commands from recent sessions, with the turns they came from.

    A correction is a person redirecting an agent; a retry is a command that failed and then
    worked another way.
    """


@declared("day")
def day_command() -> None:
    """What was worked on that day (default today), by repository.

    Sessions, files the agents wrote, and the commits made there.
    """


@declared("week")
def week_command() -> None:
    """What was worked on, day by day, by repository: `brain day` for each day since --since."""
