"""The arguments and options of brain's commands, declared once: brain.app builds each Typer
command (flags, help, defaults, --help output) from these, and brain.cli's fast path parses the
argv of those hooks and agents run many times a session with them without importing Typer.
Anything the fast parse does not understand (`--help`, a typo, a bad number) falls through to
Typer, which says what is wrong.

Plain tuples of builtins on purpose: this module is on every hook's path, so it imports nothing
(not even typing or dataclasses).
"""

from __future__ import annotations

# An option: (flags, destination, kind, help). `kind` is str, int or float (takes a value, default
# None: the runner picks the default, unless DEFAULTS names one), list (takes a value each time it
# is given: the values in order, None when never given) or bool (a flag, default False). A help of
# None hides the option (what brain's own hooks pass and people never type).
Option = tuple[tuple[str, ...], str, type, str | None]
# A positional argument: (destination, arity, help); arity "1" exactly one word, "+" one or more
# words, "*" any number, "?" at most one (None when absent). Only the last argument may take many
# words.
Argument = tuple[str, str, str]
Command = tuple[tuple[Argument, ...], tuple[Option, ...]]
# COMMANDS is keyed by the words after `brain`: "find", a subcommand "inbox approve", and "" for
# brain's own options (before the command). A key that other keys extend ("recall", "inbox") is a
# group: its options may come before the subcommand, and a subcommand that declares the same
# destination takes the group's value when it has none of its own.

VAULT: Option = (
    ("--vault",),
    "vault",
    str,
    "The vault (a folder with AI/ in it). Default: $BRAIN_VAULT, else the recorded vault.",
)
JSON: Option = (("--json",), "as_json", bool, "Print one JSON object on stdout.")
TO: Option = (
    ("--to",),
    "to",
    str,
    "The core file it belongs in: MEMORY (default), LEARNINGS or TUNINGS.",
)
AGENT: Option = (("--agent",), "agent", str, "Only this agent's sessions (claude, codex, ...).")
NO_GIT: Option = (("--no-git",), "no_git", bool, "Leave the repositories' commits out.")
PROJECT: Option = (("--project",), "project", str, "Only this repository (its folder name).")
LOOKUPS_SINCE: Option = (
    ("--since",),
    "since",
    str,
    "Only lookups from DATE on (2026-05-01, 7d, 2w, 24h).",
)

RECALL_ALL: Option = (
    ("--all",),
    "all_sessions",
    bool,
    "Include the current session (excluded by default).",
)
TURNS_SINCE: Option = (("--since",), "since", str, "Only turns from DATE on (2025-05-01, 7d).")
TURNS_AGENT: Option = (("--agent",), "agent", str, "Only this agent's turns (claude, codex, ...).")
TURNS_CWD: Option = (("--cwd",), "cwd", str, "Only turns from sessions in this folder or below.")
RECALL_AGENT: Argument = ("agent", "1", "claude, codex, gemini, copilot, opencode or pi.")
NUMBERS: Argument = (
    "numbers",
    "+",
    "Proposals by their number in `brain inbox`: N, a range N-M, or all.",
)

COMMANDS: dict[str, Command] = {
    "": (
        (),
        (
            (
                ("--version",),
                "version",
                bool,
                "Print the version, as `brain version` does, and exit.",
            ),
            (
                ("--color",),
                "color",
                str,
                "Colour for a person at a terminal (default: BRAIN_COLOR, else auto: none "
                "under NO_COLOR, for an agent or through a pipe). Before the command.",
            ),
        ),
    ),
    "find": (
        (("query", "+", "What to look for, in plain words."),),
        (
            VAULT,
            (
                ("--limit", "-n"),
                "limit",
                int,
                "The ranked list, at most this many hits, without the cut to what stands out.",
            ),
            (("--all",), "ranked", bool, "The ranked list without the cut (10 hits at most)."),
            (("--budget",), "budget", int, "Byte cap on the output for this call (default 2400)."),
            (("--raw",), "raw", bool, "Print each hit's line as written."),
            (("--terse",), "terse", bool, "One line per hit, as agents get, even at a terminal."),
            JSON,
        ),
    ),
    "prime": (
        (("prompt", "*", "The prompt (default: Claude Code's hook JSON on stdin)."),),
        (
            VAULT,
            (
                ("--budget",),
                "budget",
                int,
                "Token cap (bytes / 4; default 1200, or BRAIN_PRIME_BUDGET).",
            ),
            JSON,
        ),
    ),
    "pack": (
        (
            (
                "project",
                "?",
                "The project (default: the git repository you are in, by its folder name).",
            ),
        ),
        (
            VAULT,
            (("--budget",), "budget", int, "Token cap on the pack (bytes / 4; default 1500)."),
            (("--fresh",), "fresh", bool, "Rebuild the pack instead of serving the cached one."),
            JSON,
        ),
    ),
    "reindex": (
        (),
        (
            VAULT,
            (
                ("--full",),
                "full",
                bool,
                "Rebuild from nothing into a new file, swapped in atomically.",
            ),
            JSON,
        ),
    ),
    "sync": (
        (
            ("action", "?", "status, connect, follow, on or off (default: one pass)."),
            ("url", "?", "With connect: the remote's URL."),
        ),
        (VAULT, JSON, (("--background",), "background", str, None)),
    ),
    "propose": (
        (("line", "+", "The bullet: `handle — fact`; source and date are added if missing."),),
        (
            TO,
            (
                ("--force",),
                "force",
                bool,
                "Correct the bullet that has this handle (approving replaces it); without it "
                "such a line is refused.",
            ),
            (
                ("--pr",),
                "pr",
                bool,
                "With `proposals: team`, also open a pull request for its branch (needs `gh` "
                "and a remote on GitHub).",
            ),
            VAULT,
            JSON,
        ),
    ),
    "settle": ((), (VAULT,)),
    "tend": (
        (),
        (
            (
                ("--dry-run",),
                "dry_run",
                bool,
                "Say what it would apply and propose; write nothing.",
            ),
            (("--daily",), "daily", bool, "The hooks' quiet sweep: once a day, bounded, exit 0."),
            (
                ("--quick",),
                "quick",
                bool,
                "The daily sweep's bounded pass, now and with its report (BRAIN_TEND_SECONDS).",
            ),
            VAULT,
            JSON,
        ),
    ),
    # what past sessions did (brain.run): the transcripts' commands
    "howto": (
        (("terms", "+", "The task, in plain words."),),
        (
            (("--limit", "-n"), "limit", int, "At most this many commands."),
            (("--all",), "failed", bool, "Show failed attempts too."),
            (("--since",), "since", str, "Only sessions from DATE on (2025-05-01, 30d)."),
            AGENT,
            (("--cwd",), "cwd", str, "Only sessions in this folder or below."),
            (("--propose",), "propose", bool, "Queue it in the inbox (once)."),
            TO,
            VAULT,
            JSON,
        ),
    ),
    "lessons": (
        (),
        (
            (("--since",), "since", str, "Sessions from DATE on (2025-05-01, 7d, 2w)."),
            (("--kind",), "kind", str, "Only corrections or only retries."),
            AGENT,
            (("--propose",), "propose", bool, "Queue each for LEARNINGS (never twice)."),
            VAULT,
            JSON,
        ),
    ),
    "day": (
        (("day", "?", "YYYY-MM-DD, today or yesterday."),),
        (NO_GIT, PROJECT, AGENT, JSON),
    ),
    "week": (
        (),
        (
            (
                ("--since",),
                "since",
                str,
                "From this day (7d: today and the 6 before, or a date).",
            ),
            NO_GIT,
            PROJECT,
            AGENT,
            JSON,
        ),
    ),
    # checks and upkeep
    "lint": (
        (("paths", "*", "Files to check (default: the core files)."),),
        (
            (("--staged",), "staged", bool, "Check what is staged for commit (git index)."),
            (
                ("--strict",),
                "strict",
                bool,
                "Bullets and synonyms must be plain prose (as `lint: strict` in AI/config.yaml"
                " asks).",
            ),
            VAULT,
            JSON,
        ),
    ),
    "secrets": (
        (("paths", "*", "Files or folders to scan (default: every file of the vault)."),),
        (
            (("--staged",), "staged", bool, "Scan what is staged for commit (git index)."),
            (
                ("--history",),
                "history",
                bool,
                "Scan every version of every file in every commit of the vault.",
            ),
            (
                ("--outgoing",),
                "outgoing",
                bool,
                "Scan the commits not on the remote yet, as `brain sync` sends them.",
            ),
            VAULT,
            JSON,
        ),
    ),
    "verify": (
        (("handles", "*", "Bullets by handle or alias (default: every bullet)."),),
        (
            (
                ("--apply",),
                "apply",
                bool,
                "Date today the bullets whose every claim checked passed.",
            ),
            VAULT,
            JSON,
        ),
    ),
    "doctor": ((), (VAULT, JSON)),
    "log": ((), (VAULT, LOOKUPS_SINCE, JSON)),
    "ledger": (
        (),
        (
            VAULT,
            LOOKUPS_SINCE,
            (("--caller",), "caller", str, "Only this caller's lookups (e.g. claude-code)."),
            JSON,
        ),
    ),
    "learn": (
        (),
        ((("--apply",), "apply", bool, "Write the changes (a line edit each)."), VAULT, JSON),
    ),
    "review": (
        (("mode", "?", "before (the default) or after; none: show it."),),
        (VAULT, JSON),
    ),
    "locate": (
        (("handle", "*", "The bullet's handle or an alias (none: print the vault's folder)."),),
        (VAULT, JSON),
    ),
    # recall: what was said in the agents' transcripts
    "recall": ((), ()),
    "recall search": (
        (("query", "+", "What was said, in plain words."),),
        (
            RECALL_ALL,
            (("--limit", "-n"), "limit", int, "At most this many hits."),
            TURNS_SINCE,
            TURNS_AGENT,
            TURNS_CWD,
            JSON,
        ),
    ),
    "recall full": (
        (("turn", "1", "The turn's id as listed, or any unique start of it."),),
        (JSON,),
    ),
    "recall sessions": (
        (("query", "*", "Only sessions that said this, best first (default: the newest)."),),
        (
            RECALL_ALL,
            (("--limit", "-n"), "limit", int, "At most this many sessions."),
            TURNS_SINCE,
            TURNS_AGENT,
            TURNS_CWD,
            JSON,
        ),
    ),
    "recall sync": ((), (JSON,)),
    "recall sources": ((), (JSON,)),
    "recall enable": ((RECALL_AGENT,), (JSON,)),
    "recall disable": ((RECALL_AGENT,), (JSON,)),
    # the inbox: proposals waiting for a person
    "inbox": ((), (VAULT, JSON)),
    "inbox approve": ((NUMBERS,), (TO, VAULT, JSON)),
    "inbox drop": ((NUMBERS,), (VAULT, JSON)),
    # setting up
    "install": (
        (
            (
                "path",
                "?",
                "The vault folder. Default: $BRAIN_VAULT, else the recorded vault, else "
                "~/Documents/Brain (created as a git repository with a starter AI/).",
            ),
        ),
        (
            (
                ("--init",),
                "init",
                bool,
                "Run `git init` in an existing folder that is not a git repository yet "
                "(asked at a terminal; required otherwise).",
            ),
            (("--yes", "-y"), "yes", bool, None),  # the same as --init
            (("--vault",), "vault", str, "The vault folder, as PATH (either one)."),
            (
                ("--dry-run",),
                "dry_run",
                bool,
                "Say what install would write and run; write nothing.",
            ),
            JSON,
        ),
    ),
    "desk": (
        (),
        (
            VAULT,
            (
                ("--port",),
                "port",
                int,
                "Listen on this port of 127.0.0.1 (default: any free).",
            ),
            (("--no-open",), "no_open", bool, "Print the URL only; do not open a browser."),
            (("--idle",), "idle", float, None),  # seconds without a request before it stops
        ),
    ),
    "mcp": (
        (),
        (
            VAULT,
            (("--http",), "http", bool, "Serve on streamable HTTP behind a token, not stdio."),
            (
                ("--port",),
                "port",
                int,
                "With --http: the port (default 8417; 0: any free one).",
            ),
            (
                ("--host",),
                "host",
                str,
                "With --http: the address to listen on (default 127.0.0.1).",
            ),
            (
                ("--allow-host",),
                "allow_host",
                list,
                "With --http: another name clients call it by (Host header).",
            ),
        ),
    ),
    "hooks": (
        (("action", "?", "on, off or status."),),
        (
            (
                ("--harness",),
                "harness",
                str,
                "Only this agent program: claude, codex, gemini or copilot.",
            ),
            JSON,
        ),
    ),
    "uninstall": ((), (JSON,)),
    "version": ((), (JSON,)),
    "update": (
        (),
        (
            (
                ("--rollback",),
                "rollback",
                bool,
                "Put back the version the last update replaced.",
            ),
            (("--check",), "check", bool, "Only say whether a newer release is waiting."),
            JSON,
        ),
    ),
    # moving memories in and out
    "export": (
        (
            (
                "agents",
                "+",
                "claude, codex (or agents: AGENTS.md), copilot, gemini, cursor, cline, kiro, "
                "opencode, jules, warp, zed, junie, or all (with --check: every one this "
                "repository has).",
            ),
        ),
        (
            (("--check",), "check", bool, "Write nothing; exit 1 when a file is out of date (CI)."),
            (
                ("--project",),
                "project",
                str,
                "Pack this project (default: the repository's folder name).",
            ),
            (("--budget",), "budget", int, "Token cap on the exported pack (default 1500)."),
            VAULT,
            JSON,
        ),
    ),
    "import": (
        (
            (
                "source",
                "1",
                "`claude` (what Claude Code remembered for this repository) or a Markdown FILE.",
            ),
        ),
        (
            (
                ("--dir",),
                "memory_dir",
                str,
                "Claude Code's memory folder, when it is not the usual one.",
            ),
            TO,
            VAULT,
            JSON,
        ),
    ),
}

# Every command of brain's, by name: what `brain verify` checks a bullet's `brain X` against
# without importing Typer. tests/test_options.py checks it is the Typer app's list.
NAMES = tuple(sorted(key for key in COMMANDS if key and " " not in key))

# The value an option takes when it is not given, where it is not None (or False): command ->
# destination -> default. Typer shows it in --help; both paths hand it to the runner.
DEFAULTS: dict[str, dict[str, object]] = {
    "howto": {"limit": 5},
    "lessons": {"since": "7d"},
    "week": {"since": "7d"},
    "recall search": {"limit": 10},
    "recall sessions": {"limit": 20},
    "desk": {"port": 0, "idle": 3600.0},
}

# The name --help shows for a value, where it is not the kind's (command -> destination -> name).
METAVARS: dict[str, dict[str, str]] = {
    "": {"color": "auto|always|never"},
    "inbox approve": {"numbers": "N..."},
    "inbox drop": {"numbers": "N..."},
}

# The modes `brain recall` took as options before they were subcommands: old spelling -> takes a
# value. `brain recall --full ID` still works, as `brain recall full ID`.
RECALL_MODES = {
    "--full": True,
    "--sessions": False,
    "--sync": False,
    "--sources": False,
    "--enable": True,
    "--disable": True,
}


def default(command: str, dest: str, kind: type) -> object:
    """What option `dest` of `command` is when it is not given."""
    return DEFAULTS.get(command, {}).get(dest, False if kind is bool else None)


def table(command: str) -> dict[str, tuple[str, type]]:
    """Flag -> (destination, kind) for every flag of `command`."""
    return {flag: (dest, kind) for flags, dest, kind, _ in COMMANDS[command][1] for flag in flags}


def parse(command: str, args: list[str]) -> dict[str, object] | None:
    """`command`'s keyword arguments from `args` (every one declared, defaults included), as its
    Typer command hands them to the runner, or None when anything is not understood (`--help`,
    an unknown flag, a bad number, the wrong number of words), so that Typer handles it and says
    what is wrong.

    An argument that starts with a dash but holds a space is text, not an option (a Markdown
    bullet `- **handle** — fact`, a query `-- why`): no flag has a space."""
    spec = COMMANDS[command]
    flags = table(command)
    opts: dict[str, object] = {dest: default(command, dest, kind) for dest, kind in flags.values()}
    words: list[str] = []
    it = iter(args)
    for arg in it:
        if arg == "--":
            words.extend(it)
            break
        name, eq, value = split(arg, flags)
        if not arg.startswith("-") or arg == "-" or (name not in flags and is_text(arg)):
            words.append(arg)
            continue
        if name not in flags:
            return None
        dest, kind = flags[name]
        if kind is bool:
            if eq:
                return None
            opts[dest] = True
            continue
        if not eq:
            nxt = next(it, None)
            if nxt is None:
                return None
            value = nxt
        if kind is list:  # repeatable: every value, in order
            given = opts[dest]
            opts[dest] = [*given, value] if isinstance(given, list) else [value]
            continue
        try:
            opts[dest] = kind(value)  # int() and float() read a number as Click does
        except ValueError:
            return None
    return _place(spec[0], words, opts)


def _place(
    arguments: tuple[Argument, ...], words: list[str], opts: dict[str, object]
) -> dict[str, object] | None:
    """`opts` with the positional `words` given to `arguments`, or None when their number does
    not fit (too few for a "+" argument, more than the arguments take)."""
    for dest, arity, _ in arguments:
        if arity == "1" and not words:
            return None
        if arity in ("1", "?"):
            opts[dest] = words.pop(0) if words else None
        elif arity == "+" and not words:
            return None
        else:
            opts[dest] = words if words or arity == "+" else None
            words = []
    return None if words else opts


def split(arg: str, flags: dict[str, tuple[str, type]]) -> tuple[str, str, str]:
    """(flag, "=" or "", value) of one argument, as Click reads it: `--limit=3`, and a short flag
    with its value glued on, `-n3` (where `-n=3` is the value "=3")."""
    if arg[:1] == "-" and arg[1:2] != "-" and len(arg) > 2 and arg[:2] in flags:
        return arg[:2], "=", arg[2:]
    return arg.partition("=")


def is_text(arg: str) -> bool:
    """An argument that starts with a dash but is text, not an option: it holds a space."""
    return any(c.isspace() for c in arg.partition("=")[0])


def words_last(command: str, args: list[str]) -> list[str]:
    """`args` for Typer with the positional words after `--` when one of them starts with a dash
    (Click would take `- **handle** — fact` for an unknown option `-`); unchanged when anything
    is not understood (`--help`, a typo), so that Typer says what is wrong."""
    flags = table(command)
    opts: list[str] = []
    words: list[str] = []
    it = iter(args)
    for arg in it:
        name, eq, _ = split(arg, flags)
        if arg == "--":
            words.extend(it)
        elif arg.startswith("-") and name in flags:
            opts.append(arg)
            nxt = next(it, None) if flags[name][1] is not bool and not eq else None
            if nxt is not None:
                opts.append(nxt)
        elif arg.startswith("-") and arg != "-" and not is_text(arg):
            return list(args)
        else:
            words.append(arg)
    if not any(w.startswith("-") for w in words):
        return list(args)
    return [*opts, "--", *words]


def subcommands(group: str) -> list[str]:
    """The words of `group`'s subcommands ("search", "full", ...), in declared order; none for a
    command that is not a group (and for "", brain itself: its commands are NAMES)."""
    head = group + " "
    return [key[len(head) :] for key in COMMANDS if group and key.startswith(head)]


def recall_args(args: list[str]) -> list[str]:
    """The arguments after `brain recall` as its subcommands read them: QUERY is `search QUERY`,
    an old spelling of a mode is its subcommand (`--full ID` is `full ID`, `--sync` is `sync`);
    unchanged when they start with a subcommand, and for the group's own --help."""
    if not args or args[0] in subcommands("recall"):
        return args
    head = args[: args.index("--")] if "--" in args else args
    for at, arg in enumerate(head):
        name, eq, value = arg.partition("=")
        if name in RECALL_MODES:
            after = 1 if RECALL_MODES[name] and not eq else 0  # its value, the next arg
            word = [name[2:], *([value] if eq else args[at + 1 : at + 1 + after])]
            return [*word, *args[:at], *args[at + 1 + after :]]
    if any(a in ("-h", "--help") for a in head) and not any(not a.startswith("-") for a in head):
        return args  # `brain recall --help`: the group's help, listing the subcommands
    return ["search", *args]


def command_of(args: list[str]) -> tuple[str, list[str]]:
    """The COMMANDS key that `args` (the words after `brain`) run and the arguments that are its
    own: ("inbox approve", ["3"]) for `inbox approve 3`, ("recall search", ["x"]) for `recall x`;
    ("", args) when they name no command (`--help`, a typo) for Typer to say so."""
    if args[:1] == ["recall"]:
        args = ["recall", *recall_args(args[1:])]
    for n in (2, 1):
        key = " ".join(args[:n])
        if len(args) >= n and key and key in COMMANDS:
            return key, args[n:]
    return "", args
