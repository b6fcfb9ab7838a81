"""Brain's hooks in coding agents' own settings files: which event runs which brain command.

`HOOKS` is the whole mapping, as data: one row per (agent, event) with the matchers it is
registered for and the brain arguments it runs (pack at session start, prime at each prompt,
settle at each stop, under each agent's own event names). `brain hooks on` and `brain install`
register every row of an agent, `brain hooks off` and `brain uninstall` remove them.
Claude Code, Codex CLI and Gemini CLI keep hooks in one settings file of the same shape (event ->
groups with a matcher -> command entries), edited in place; GitHub Copilot CLI reads every file in
a folder, so brain writes a file of its own there (`own_file`), edits it in place like the others
once it exists, and deletes it only when nothing but brain's entries is left in it.

A command brain writes is `<brain> ARGS # ID: brain-hook-…`: brain's absolute executable (else its
interpreter with `-P -m brain`), the row's arguments, and a shell comment carrying the same ID line
as brain's generated git hooks. A command ending in that ID comment is brain's whatever the user
edited before it (`prime --budget 400`, a wrapper) and whatever keys they added to its entry (a
"timeout"): `hooks on` keeps the one entry per event and matcher, bringing only its launcher up to
date when it is in brain's own form (brain moved) and keeping the rest; `hooks off` removes the
entry, its keys with it (they configured brain's hook and mean nothing without it). Without the ID
only exactly what brain wrote before the comment existed (`<absolute brain> pack`) is brain's;
anything else, even a command that runs `brain pack` among other things, belongs to someone else
and is never changed or removed.

The files are edited as text (brain.jsonedit): everything brain does not change stays byte for
byte, a file that does not parse or is read-only is never written, and brain keeps a record of the
containers it created (the file, `hooks`, an event's list) so that uninstall removes exactly those
and leaves what the user had, even an empty `"hooks": {}`.
"""

from __future__ import annotations

import contextlib
import json
import os
import re
import shlex
import stat
import sys
from collections.abc import Sequence
from dataclasses import dataclass
from pathlib import Path, PurePosixPath, PureWindowsPath
from typing import Any

from brain import jsonedit
from brain.config import config_dir
from brain.files import read_json_dict, write_atomic
from brain.settings import current
from brain.shipped import HOOK_ID, brain_executable


@dataclass(frozen=True)
class Agent:
    name: str
    label: str
    home_env: str  # the variable that moves the agent's config folder
    home: str  # the folder under HOME otherwise
    file: str  # the file that holds its hooks
    program: str  # its executable: on PATH means the agent is on this machine
    nested: str = ""  # the config folder under `home_env` (Gemini's is the home, not the folder)
    own_file: bool = False  # hooks in a file of brain's own (Copilot reads every file in a folder)

    def folder(self) -> Path:
        base = current().env.get(self.home_env)
        if base:
            return Path(base).expanduser() / self.nested
        return Path.home() / self.home

    def settings_path(self) -> Path:
        return self.folder() / self.file

    def found(self) -> bool:
        """The agent is on this machine: its config folder exists or its program is on PATH."""
        import shutil

        return self.folder().is_dir() or shutil.which(self.program) is not None


AGENTS = {
    "claude": Agent(
        "claude", "Claude Code", "CLAUDE_CONFIG_DIR", ".claude", "settings.json", "claude"
    ),
    "codex": Agent("codex", "Codex CLI", "CODEX_HOME", ".codex", "hooks.json", "codex"),
    "gemini": Agent(
        "gemini", "Gemini CLI", "GEMINI_CLI_HOME", ".gemini", "settings.json", "gemini", ".gemini"
    ),
    "copilot": Agent(
        "copilot",
        "GitHub Copilot CLI",
        "COPILOT_HOME",
        ".copilot",
        "hooks/brain.json",
        "copilot",
        own_file=True,
    ),
}


@dataclass(frozen=True)
class HookRow:
    agent: str
    event: str
    matchers: tuple[str, ...]  # one group per matcher; "" for an event that takes none
    args: tuple[str, ...]  # what brain runs


# Each agent's own event names for brain's three moments: the session starts (pack), a prompt
# arrives (prime), a turn ends (settle). Gemini names its prompt and stop events apart; Copilot
# CLI gets Claude's event names, under which it sends Claude's JSON keys, and no prompt hook (it
# drops what a prompt hook prints, so prime could add nothing).
#
# Session start: at startup, after /clear, and after a compaction (its summary drops the pack):
# Claude Code's sources startup|resume|clear|compact|fork (its hooks reference, SessionStart),
# Codex's startup|resume|clear|compact (codex-rs/hooks/src/events/session_start.rs; a compaction
# queues SessionStartSource::Compact: codex-rs/core/src/session/mod.rs,
# replace_compacted_history). Gemini CLI's are startup|resume|clear (docs/hooks/reference.md,
# SessionStart). Not resume or fork: a resumed or forked conversation already holds the pack it
# started with (Claude Code saves what a hook injects in the transcript and replays it on
# resume; Codex rebuilds a resumed thread from its rollout), and prime serves what is new.
HOOKS: tuple[HookRow, ...] = (
    HookRow("claude", "SessionStart", ("startup", "clear", "compact"), ("pack",)),
    HookRow("claude", "UserPromptSubmit", ("",), ("prime",)),
    HookRow("claude", "Stop", ("",), ("settle",)),
    HookRow("codex", "SessionStart", ("startup", "clear", "compact"), ("pack",)),
    HookRow("codex", "UserPromptSubmit", ("",), ("prime",)),
    HookRow("codex", "Stop", ("",), ("settle",)),
    HookRow("gemini", "SessionStart", ("startup", "clear"), ("pack",)),
    HookRow("gemini", "BeforeAgent", ("",), ("prime",)),
    HookRow("gemini", "AfterAgent", ("",), ("settle",)),
    HookRow("copilot", "SessionStart", ("",), ("pack",)),
    HookRow("copilot", "Stop", ("",), ("settle",)),
)
SESSION_MATCHERS = HOOKS[0].matchers
ROLES = ("pack", "prime", "settle")
# what an agent cannot carry, said by `brain hooks status` and the README
CANNOT = {("copilot", "prime"): "Copilot CLI drops what a prompt hook prints"}
STALE = "brain's entries are out of date (brain moved, or an older form): run `brain hooks on`"
_MARK = f" # {HOOK_ID}"
_ID = re.compile(r"\s*#\s*" + re.escape(HOOK_ID) + r"\s*$")  # brain's, however spaced


@dataclass(frozen=True)
class AgentHooks:
    agent: str
    settings: str
    action: str  # added | updated | present | removed | absent | unparseable | read-only | failed
    hooks: tuple[str, ...]  # the hooks added or removed: `Event` or `Event:matcher`
    command: str | None  # the hook command brain wrote or removed (None when none)
    message: str | None = None  # what went wrong, when something did

    @property
    def failed(self) -> bool:
        return self.action in ("unparseable", "read-only", "failed")


# --- commands, in each shell's own form ---------------------------------------------------------
#
# An agent hands a hook's command to a shell, and each shell quotes its own way: POSIX `sh`/bash
# (Claude Code; Codex and Gemini CLI off Windows; Copilot's `bash`), PowerShell (Gemini CLI on
# Windows: packages/core/src/utils/shell-utils.ts, getShellConfiguration, pwsh else
# powershell.exe with -Command; Copilot's `powershell`, github/docs hooks-reference.md "Command
# hooks"; Codex's `commandWindows`, which Codex hands to PowerShell). shlex's quoting means
# nothing to PowerShell (`'C:\x\brain.exe' pack` is a string followed by a stray token there), so
# each shell gets its own string. Claude Code runs a command through Git Bash on Windows (its
# hooks reference): the POSIX form. No agent brain configures runs its hooks through cmd.exe.
#
# A Gemini CLI command is guarded: Gemini reads a hook's stderr when its stdout is empty and
# turns an exit code other than 0 and 1 into "deny" (packages/core/src/hooks/hookRunner.ts at
# 5411f113, convertPlainTextToHookOutput: "All other non-zero exit codes (including 2) are
# blocking"), so a brain that is gone (bash: 127 and "No such file or directory") would block
# every prompt. Its command sends brain's stderr nowhere and always exits 0. (Gemini appends
# `; if ($LASTEXITCODE -ne 0) { exit $LASTEXITCODE }` to a PowerShell command, hookRunner.ts
# executeCommandHook: after brain's ID comment it is comment too, and brain's `exit 0` stands.)

SH = "sh"
POWERSHELL = "powershell"
_SH_GUARD = " 2>/dev/null || true"
_PS_TRY, _PS_GUARD = "try { ", " 2>$null } catch {}; exit 0"
_PS_BARE = re.compile(r"(?:[A-Za-z0-9_][A-Za-z0-9_./:=+-]*|--?[A-Za-z][A-Za-z0-9-]*)")
_PS_QUOTES = "'\u2018\u2019\u201a\u201b"  # PowerShell reads each as a single quote


def launcher() -> list[str]:
    """How a hook starts brain: its absolute executable, else its interpreter with -m."""
    exe = brain_executable()
    if exe is not None:
        return [str(exe)]
    return [sys.executable, "-P", "-m", "brain"]


def _windows() -> bool:
    return os.name == "nt"


def _ps_quote(word: str) -> str:
    """`word` as PowerShell reads it back: bare when it is a plain word, else in single quotes
    (nothing expands there; a quote, any of the four PowerShell takes for one, is doubled)."""
    if _PS_BARE.fullmatch(word):
        return word
    return "'" + "".join(c * 2 if c in _PS_QUOTES else c for c in word) + "'"


def _ps_words(text: str) -> list[str]:
    """The words of `text` as PowerShell splits a simple command: by whitespace, single-quoted
    strings kept whole with their doubled quotes undone."""
    words: list[str] = []
    i, n = 0, len(text)
    while i < n:
        if text[i].isspace():
            i += 1
            continue
        word: list[str] = []
        while i < n and not text[i].isspace():
            if text[i] in _PS_QUOTES:
                i += 1
                while i < n:
                    if text[i] in _PS_QUOTES:
                        if i + 1 < n and text[i + 1] in _PS_QUOTES:
                            word.append(text[i])
                            i += 2
                            continue
                        i += 1
                        break
                    word.append(text[i])
                    i += 1
            else:
                word.append(text[i])
                i += 1
        words.append("".join(word))
    return words


def _quoted(words: Sequence[str], shell: str = SH) -> str:
    if shell == POWERSHELL:  # the call operator runs the quoted path
        return "& " + " ".join(_ps_quote(w) for w in words)
    return " ".join(shlex.quote(w) for w in words)


def _wrap(body: str, shell: str, guarded: bool) -> str:
    if not guarded:
        return body
    return f"{_PS_TRY}{body}{_PS_GUARD}" if shell == POWERSHELL else body + _SH_GUARD


def command(
    args: Sequence[str],
    launch: Sequence[str] | None = None,
    shell: str = SH,
    guarded: bool = False,
) -> str:
    """Brain's hook command in `shell`'s form: `launch` (else `launcher()`) and `args`, guarded
    or not, and the ID comment (a comment in POSIX shells and PowerShell alike)."""
    words = [*(launcher() if launch is None else launch), *args]
    return _wrap(_quoted(words, shell), shell, guarded) + _MARK


def _unwrap(body: str) -> tuple[str, str, bool]:
    """(shell, the call without its guard, guarded) of a command body in one of brain's forms."""
    text = body.strip()
    if text.startswith(_PS_TRY) and text.endswith(_PS_GUARD):
        return POWERSHELL, text[len(_PS_TRY) : -len(_PS_GUARD)], True
    if text.startswith("& "):
        return POWERSHELL, text, False
    if text.endswith(_SH_GUARD):
        return SH, text[: -len(_SH_GUARD)], True
    return SH, text, False


def _split(call: str, shell: str) -> list[str]:
    if shell == POWERSHELL:
        return _ps_words(call.removeprefix("& "))
    return _words(call)


def _exe_name(word: str) -> str:
    return PureWindowsPath(word).name if "\\" in word else PurePosixPath(word).name


def _launch_len(words: list[str]) -> int:
    """How many leading words start brain the way `launcher()` writes it (0: not that way)."""
    if not words:
        return 0
    first = words[0]
    if not (PurePosixPath(first).is_absolute() or PureWindowsPath(first).is_absolute()):
        return 0
    if words[1:4] == ["-P", "-m", "brain"]:
        return 4
    return 1 if _exe_name(first) in ("brain", "brain.exe") else 0


def _words(body: str) -> list[str]:
    try:
        return shlex.split(body)
    except ValueError:  # a quote the user left open: still brain's entry, read by its spaces
        return body.split()


def brain_args(cmd: object) -> tuple[str, ...] | None:
    """The arguments of brain's hook command from its subcommand on (`prime --budget 400`; ()
    when it names none of HOOKS' subcommands), or None for anyone else's command.

    A command is brain's when it ends in brain's ID comment, whatever was edited before it (the
    user's `--budget 400`, a wrapper): the ID is brain's mark and no one else's. Without the ID,
    only exactly what brain wrote before the comment existed is brain's: `<absolute brain> pack`.
    Each shell's form is read (brain's guard around the call is not an argument)."""
    if not isinstance(cmd, str):
        return None
    marked = _ID.search(cmd)
    if marked is None:
        words = _words(cmd)
        n = _launch_len(words)
        if n and words[n:] == ["pack"] and _quoted(words) == cmd:
            return ("pack",)
        return None
    shell, call, _ = _unwrap(cmd[: marked.start()])
    words = _split(call, shell)
    verbs = {row.args[0] for row in HOOKS}
    at = next((i for i, w in enumerate(words) if i and w in verbs), len(words))
    return tuple(words[at:])


def role(cmd: object) -> str | None:
    """Which of brain's hook commands `cmd` is (`pack`, `prime`, `settle`), or None."""
    args = brain_args(cmd)
    return args[0] if args else None


def refreshed(
    cmd: str,
    args: Sequence[str],
    launch: Sequence[str] | None = None,
    shell: str = SH,
    guarded: bool = False,
) -> str:
    """Brain's entry `cmd` as `hooks on` leaves it: a command from before the ID comment becomes
    brain's current one; in a marked one whose launcher is in brain's own form, the launcher is
    brought up to date (brain moved) and so is brain's guard (a Gemini entry written before it),
    and what the user edited after the launcher stays, to the byte. A marked command in another
    shell's form than `shell`'s is written anew in `shell`'s, with its arguments; one whose
    launcher is not brain's (the user's wrapper) stays as it is."""
    marked = _ID.search(cmd)
    if marked is None:
        return command(args, launch, shell, guarded)
    found, call, _ = _unwrap(cmd[: marked.start()])
    words = _split(call, found)
    n = _launch_len(words)
    if not n:
        return cmd
    launch = launcher() if launch is None else launch
    if found != shell:
        return command(words[n:], launch, shell, guarded)
    old = _quoted(words[:n], found)
    if not call.startswith(old):
        return cmd
    return _wrap(_quoted(launch, found) + call[len(old) :], shell, guarded) + cmd[marked.start() :]


# Each agent's command keys and the shell and guard of each: Claude Code, Codex CLI and Gemini
# CLI read one `command` (Codex also a `commandWindows` on Windows: codex-rs/hooks
# CommandHookHandler::command_for_platform), Copilot CLI a `bash` and a `powershell`.
def command_keys(agent: str) -> tuple[tuple[str, str, bool], ...]:
    if agent == "gemini":
        return (("command", POWERSHELL if _windows() else SH, True),)
    if agent == "copilot":
        return (("bash", SH, False), ("powershell", POWERSHELL, False))
    if agent == "codex" and _windows():
        return (("command", SH, False), ("commandWindows", POWERSHELL, False))
    return (("command", SH, False),)


# --- the record of what brain created ------------------------------------------------------------


def _record_file() -> Path:
    """{settings file: what brain created in it}: "dir" (its folder), "file", "blank" (it was
    empty), "hooks", "hooks/<event>". A file brain wrote to without creating anything has an
    empty list; a file absent from the record was edited by an older brain, history unknown."""
    return config_dir() / "agent-hooks.json"


def _record() -> dict[str, list[str]]:
    doc = read_json_dict(_record_file())
    return {k: [str(x) for x in v] for k, v in doc.items() if isinstance(v, list)}


def written() -> set[str]:
    """The settings files brain has written its hooks into (and not removed them from since)."""
    return set(_record())


def _save_record(record: dict[str, list[str]]) -> None:
    path = _record_file()
    if record:
        with contextlib.suppress(OSError):
            write_atomic(path, json.dumps(record, indent=2) + "\n")
    else:
        with contextlib.suppress(FileNotFoundError):
            path.unlink()


# --- reading and writing the file ----------------------------------------------------------------


@dataclass
class _File:
    path: Path
    text: str  # "" when the file is absent or blank
    existed: bool


def _load(path: Path, events: Sequence[str]) -> _File | str:
    """The file, or a sentence saying why it must not be edited."""
    try:
        text = path.read_bytes().decode("utf-8")  # bytes: CRLF line ends stay as they are
    except FileNotFoundError:
        return _File(path, "", False)
    except (OSError, UnicodeDecodeError) as exc:
        return f"cannot be read ({exc})"
    if not text.strip():
        return _File(path, "", True)
    try:
        doc = json.loads(text)
    except json.JSONDecodeError as exc:
        return f"is not valid JSON (line {exc.lineno}: {exc.msg})"
    if not isinstance(doc, dict):
        return "is not a JSON object"
    hooks = doc.get("hooks", {})
    if not isinstance(hooks, dict) or any(not isinstance(hooks.get(e, []), list) for e in events):
        return 'has "hooks" in an unexpected shape'
    return _File(path, text, True)


def _read_only(path: Path) -> bool:
    try:
        mode = Path(os.path.realpath(path)).stat().st_mode
    except OSError:
        return False
    return not stat.S_IMODE(mode) & 0o222


def _write(f: _File, text: str) -> str:
    """Write `text` over the file; "" when done, else why not."""
    if f.existed and _read_only(f.path):
        return "is read-only"
    try:
        write_atomic(f.path, text)
    except OSError as exc:
        return f"cannot be written ({exc.strerror})"
    return ""


def covers(matcher: object, wanted: str) -> bool:
    if matcher is None or matcher in ("", "*"):
        return True
    return isinstance(matcher, str) and wanted in (m.strip() for m in matcher.split("|"))


def _group(matcher: str, entry: dict[str, Any]) -> dict[str, Any]:
    return {"matcher": matcher, "hooks": [entry]} if matcher else {"hooks": [entry]}


def _entry(agent: str, row: HookRow, launch: Sequence[str] | None) -> dict[str, Any]:
    """Brain's hook entry for `row` in `agent`'s settings: one command per key the agent reads."""
    keys = command_keys(agent)
    return {"type": "command", **{k: command(row.args, launch, sh, g) for k, sh, g in keys}}


def _platform_key(agent: str) -> tuple[str, str, bool]:
    """The command key `agent` runs on this machine, with its shell and guard."""
    keys = command_keys(agent)
    return keys[-1] if _windows() and len(keys) > 1 else keys[0]


def runs(agent: str, entry: dict[str, Any]) -> object:
    """The command `agent` runs for `entry` on this machine: its platform's key, else the
    cross-platform `command` (Copilot CLI's fallback, hooks-reference.md; Codex's)."""
    key = _platform_key(agent)[0]
    value = entry.get(key)
    return value if isinstance(value, str) else entry.get("command")


def _on(agent: str, entry: dict[str, Any], verb: str) -> bool:
    """Whether `entry` runs brain's `verb` in `agent` on this machine, in a form its shell reads
    (brain's POSIX form under PowerShell is not on: PowerShell cannot parse it)."""
    cmd = runs(agent, entry)
    if role(cmd) != verb:
        return False
    marked = _ID.search(str(cmd))
    return marked is None or _unwrap(str(cmd)[: marked.start()])[0] == _platform_key(agent)[1]


def _refresh(
    text: str,
    at: tuple[str | int, ...],
    entry: dict[str, Any],
    agent: str,
    row: HookRow,
    launch: Sequence[str] | None,
) -> str:
    """`text` with brain's entry at `at` brought up to date, key by key (`refreshed`); a command
    key the entry lacks (the Windows form, from an older brain) is added beside the others,
    with the arguments the user gave the entry's own command."""
    own = next((entry[k] for k, _, _ in command_keys(agent) if role(entry.get(k))), None)
    args = brain_args(own) or row.args
    for key, shell, guarded in command_keys(agent):
        value = entry.get(key)
        if isinstance(value, str):
            new = refreshed(value, row.args, launch, shell, guarded)
            if new != value:
                text = jsonedit.replace(text, (*at, key), new)
        else:
            text = jsonedit.append(text, at, command(args, launch, shell, guarded), key=key)
    return text


def _entries(doc: dict[str, Any], event: str) -> list[tuple[int, int, Any, dict[str, Any]]]:
    """(group index, entry index, group matcher, entry) of every hook under `event`."""
    found = []
    groups = doc.get("hooks", {}).get(event, [])
    for gi, group in enumerate(groups):
        entries = group.get("hooks") if isinstance(group, dict) else None
        if isinstance(entries, list):
            for ei, entry in enumerate(entries):
                if isinstance(entry, dict):
                    found.append((gi, ei, group.get("matcher"), entry))
    return found


def _refused(name: str, path: Path, action: str, reason: str, cmd: str, fix: str) -> AgentHooks:
    message = f"{path} {reason}; left untouched. {fix}"
    return AgentHooks(name, str(path), action, (), cmd or None, message)


def _label(event: str, matcher: str) -> str:
    return f"{event}:{matcher}" if matcher else event


def _add(
    agent: str,
    text: str,
    row: HookRow,
    matcher: str,
    launch: Sequence[str] | None,
    created: list[str],
) -> tuple[str, str]:
    """`text` with brain's `row` registered for `matcher`, and how: "added" (a new group; the
    containers brain made go into `created`), "updated" (brain's entry there, recognised by its
    ID however the user edited it, brought up to date where it stands: its other keys, such as
    a "timeout", stay) or "present"."""
    doc = json.loads(text)
    group = _group(matcher, _entry(agent, row, launch))
    if "hooks" not in doc:
        created += ["hooks", f"hooks/{row.event}"]
        return jsonedit.append(text, (), {row.event: [group]}, key="hooks"), "added"
    if row.event not in doc["hooks"]:
        created.append(f"hooks/{row.event}")
        return jsonedit.append(text, ("hooks",), [group], key=row.event), "added"
    how = ""
    for gi, ei, group_matcher, entry in _entries(doc, row.event):
        if covers(group_matcher, matcher) and role(entry.get("command")) == row.args[0]:
            how = how or "present"
            new = _refresh(text, ("hooks", row.event, gi, "hooks", ei), entry, agent, row, launch)
            if new != text:
                text, how = new, "updated"
    if how:
        return text, how
    return jsonedit.append(text, ("hooks", row.event), group), "added"


def register(name: str, launch: Sequence[str] | None = None) -> AgentHooks:
    """Add brain's rows for agent `name` to its settings: one group per missing matcher; a brain
    entry whose command is out of date (brain moved) is updated where it stands."""
    agent = AGENTS[name]
    if agent.own_file:
        return _register_own(agent, launch)
    path = agent.settings_path()
    rows = [r for r in HOOKS if r.agent == name]
    first = _first(name, rows[0], launch)
    loaded = _load(path, [r.event for r in rows])
    fix = f"Fix it and run `brain hooks on` again, or add `{first}` at {rows[0].event} by hand"
    if isinstance(loaded, str):
        return _refused(name, path, "unparseable", loaded, first, fix)
    created: list[str] = []
    if not loaded.existed:
        created.append("file")
        if not path.parent.exists():
            created.append("dir")
    elif not loaded.text:
        created.append("blank")  # an empty file: uninstall empties it again
    text, added, updated = _registered(name, loaded.text, launch, created)
    if not added and not updated:
        return AgentHooks(name, str(path), "present", (), first or None)
    problem = _write(loaded, text)
    if problem:
        action = "read-only" if problem == "is read-only" else "failed"
        how = "Add" if action == "failed" else "Make it writable and install again, or add"
        return _refused(name, path, action, problem, first, f"{how} `{first}` by hand")
    record = _record()  # for uninstall: what was there before brain (an empty list: all of it)
    if str(path) not in record and _has_ours(loaded.text):
        created.append("older")  # an older brain's entries: what it created is not known
    if added or str(path) in record:  # only updated: an older brain's entries, history unknown
        record[str(path)] = sorted(set(record.get(str(path), [])) | set(created))
        _save_record(record)
    return AgentHooks(name, str(path), "added" if added else "updated", tuple(added), first or None)


def _registered(
    name: str, text: str, launch: Sequence[str] | None, created: list[str]
) -> tuple[str, list[str], bool]:
    """(`text` with every row of agent `name` registered, the hooks added, whether an entry of
    brain's there was brought up to date)."""
    text = text or "{}\n"
    added: list[str] = []
    updated = False
    for row in (r for r in HOOKS if r.agent == name):
        for matcher in row.matchers:
            text, how = _add(name, text, row, matcher, launch, created)
            if how == "added":
                added.append(_label(row.event, matcher))
            updated = updated or how == "updated"
    return text, added, updated


def _first(agent: str, row: HookRow, launch: Sequence[str] | None) -> str:
    """Brain's first command for `agent` as this machine's shell reads it (for a person to add
    by hand when brain may not write the file)."""
    _, shell, guarded = _platform_key(agent)
    return command(row.args, launch, shell, guarded)


def _has_ours(text: str) -> bool:
    return bool(text) and bool(_ours(json.loads(text)))


def _ours(doc: dict[str, Any]) -> list[str]:
    """The commands of brain's entries in a settings document, under any event."""
    return [
        str(e["command"])
        for event in doc.get("hooks", {})
        if isinstance(doc["hooks"][event], list)
        for _, _, _, e in _entries(doc, event)
        if brain_args(e.get("command")) is not None
    ]


def _remove_ours(text: str) -> tuple[str, list[str], str, set[str]]:
    """`text` without brain's hook entries (and groups left empty): (text, the matchers removed,
    the first command removed, the events whose list is now empty)."""
    removed: list[str] = []
    first = ""
    emptied: set[str] = set()
    for event in list(json.loads(text).get("hooks", {})):
        while True:
            doc = json.loads(text)
            groups = doc["hooks"][event]
            if not isinstance(groups, list):
                break
            ours = [
                (gi, ei, m, e)
                for gi, ei, m, e in _entries(doc, event)
                if brain_args(e.get("command")) is not None
            ]
            if not ours:
                break
            gi, ei, matcher, entry = ours[0]
            first = first or str(entry["command"])
            removed.append(_label(event, matcher if isinstance(matcher, str) else ""))
            if len(groups[gi]["hooks"]) == 1:
                text = jsonedit.delete(text, ("hooks", event, gi))
                if len(groups) == 1:
                    emptied.add(event)
            else:
                text = jsonedit.delete(text, ("hooks", event, gi, "hooks", ei))
    return text, removed, first, emptied


def unregister(name: str) -> AgentHooks:
    """Remove every hook command brain wrote from agent `name`'s settings, and the containers
    brain created for them; nothing else."""
    agent = AGENTS[name]
    if agent.own_file:
        return _unregister_own(agent)
    path = agent.settings_path()
    events = sorted({r.event for r in HOOKS if r.agent == name})
    loaded = _load(path, events)
    if isinstance(loaded, str):
        fix = "Remove brain's hook entries by hand"
        return _refused(name, path, "unparseable", loaded, "", fix)
    record = _record()
    created = record.get(str(path))
    if not loaded.text:
        record.pop(str(path), None)
        _save_record(record)
        return AgentHooks(name, str(path), "absent", (), None)
    text, removed, first, emptied = _remove_ours(loaded.text)
    if not removed:
        return AgentHooks(name, str(path), "absent", (), None)
    for event in sorted(emptied):
        # brain's record says it made the list; without a record (an older brain) the list
        # held only brain's entries: gone either way
        if created is None or "older" in created or f"hooks/{event}" in created:
            text = jsonedit.delete(text, ("hooks", event))
    doc = json.loads(text)
    if created and "hooks" in created and doc.get("hooks") == {}:
        text = jsonedit.delete(text, ("hooks",))
        doc = json.loads(text)  # what the user added since ("model", "permissions") stays
    # emptied or deleted only when nothing is left but what brain wrote
    if created and "blank" in created and doc == {}:
        text = ""
    if created and "file" in created and doc == {}:
        try:
            path.unlink()
        except OSError as exc:
            return _refused(name, path, "failed", f"cannot be deleted ({exc.strerror})", first, "")
        if "dir" in created:
            with contextlib.suppress(OSError):
                path.parent.rmdir()  # only when empty
    else:
        problem = _write(loaded, text)
        if problem:
            action = "read-only" if problem == "is read-only" else "failed"
            return _refused(name, path, action, problem, first, "Remove brain's entries by hand")
    record.pop(str(path), None)
    _save_record(record)
    return AgentHooks(name, str(path), "removed", tuple(removed), first or None)


# --- an agent that reads a folder of hook files: brain's own file there ---------------------------


def _own_entry(agent: Agent, row: HookRow, launch: Sequence[str] | None) -> dict[str, Any]:
    """An entry of brain's hook file for Copilot CLI, under Claude's event names (so the JSON on
    stdin has Claude's keys), with a `bash` and a `powershell` command (Copilot runs the one of
    its platform: hooks-reference.md, "Command hooks")."""
    return {**_entry(agent.name, row, launch), "timeoutSec": 30}


def _own_rows(agent: Agent) -> list[HookRow]:
    return [r for r in HOOKS if r.agent == agent.name]


def _own_commands(doc: Any) -> list[tuple[str, int, dict[str, Any], object]] | None:
    """(event, index, entry, command) of every entry of a hook file in Copilot's shape, the
    command the first of its `bash`, `powershell` and `command` that is brain's (else the
    first there is); None for another shape."""
    if not isinstance(doc, dict) or not isinstance(doc.get("hooks"), dict):
        return None
    found: list[tuple[str, int, dict[str, Any], object]] = []
    for event, entries in doc["hooks"].items():
        if not isinstance(entries, list):
            return None
        for i, entry in enumerate(entries):
            if not isinstance(entry, dict):
                return None
            cmds = [entry[k] for k in ("bash", "powershell", "command") if k in entry]
            cmd = next((c for c in cmds if brain_args(c) is not None), cmds[0] if cmds else None)
            found.append((event, i, entry, cmd))
    return found


def _load_own(path: Path) -> tuple[str, Any] | str:
    """(text, document) of brain's file ("", None when absent), or why it must not be touched: a
    file of that name holding hooks of which none is brain's is someone else's."""
    try:
        text = path.read_bytes().decode("utf-8")
    except FileNotFoundError:
        return "", None
    except (OSError, UnicodeDecodeError) as exc:
        return f"cannot be read ({exc})"
    try:
        doc = json.loads(text)
    except json.JSONDecodeError as exc:
        return f"is not valid JSON (line {exc.lineno}: {exc.msg})"
    found = _own_commands(doc)
    theirs = found and all(brain_args(cmd) is None for *_, cmd in found)
    # brain's own file still, when `hooks off` took brain's entries out of it and kept the user's
    if found is None or (theirs and str(path) not in _record()):
        return "is not brain's hook file (it holds other hooks)"
    return text, doc


def _own_registered(agent: Agent, text: str, launch: Sequence[str] | None) -> tuple[str, list[str]]:
    """(brain's existing file `text` with brain's entries brought up to date where they stand
    and the missing ones added, the events added)."""
    added: list[str] = []
    new = text
    for row in _own_rows(agent):
        found = _own_commands(json.loads(new)) or []
        ours = [(i, d) for e, i, d, c in found if e == row.event and role(c) == row.args[0]]
        for i, entry in ours:
            new = _refresh(new, ("hooks", row.event, i), entry, agent.name, row, launch)
        if ours:
            continue
        added.append(row.event)
        entry = _own_entry(agent, row, launch)
        if row.event in json.loads(new)["hooks"]:
            new = jsonedit.append(new, ("hooks", row.event), entry)
        else:
            new = jsonedit.append(new, ("hooks",), [entry], key=row.event)
    return new, added


def _register_own(agent: Agent, launch: Sequence[str] | None) -> AgentHooks:
    """Brain's file, written whole when absent; else brain's entries in it brought up to date
    where they stand and the missing ones added, so that what the user added stays (a
    "timeoutSec", an edited argument, a key of theirs)."""
    path = agent.settings_path()
    rows = _own_rows(agent)
    first = _first(agent.name, rows[0], launch)
    loaded = _load_own(path)
    if isinstance(loaded, str):
        fix = "Move it aside and run `brain hooks on` again"
        return _refused(agent.name, path, "unparseable", loaded, first, fix)
    text, doc = loaded
    added: list[str] = []
    if doc is None:
        hooks: dict[str, list[dict[str, Any]]] = {}
        for row in rows:
            hooks.setdefault(row.event, []).append(_own_entry(agent, row, launch))
            added.append(row.event)
        new = json.dumps({"version": 1, "hooks": hooks}, indent=2) + "\n"
    else:
        new, added = _own_registered(agent, text, launch)
        if new == text:
            return AgentHooks(agent.name, str(path), "present", (), first or None)
    made = [d for d in (path.parent, agent.folder()) if not d.exists()]  # deepest first
    problem = _write(_File(path, text, doc is not None), new)
    if problem:
        action = "read-only" if problem == "is read-only" else "failed"
        return _refused(agent.name, path, action, problem, first, "")
    if doc is None:  # brain made the file (and the folders it had to): it is brain's own
        record = _record()
        record[str(path)] = ["file", *(f"dir:{d}" for d in made)]
        _save_record(record)
    action = "added" if added else "updated"
    return AgentHooks(agent.name, str(path), action, tuple(added), first or None)


def _unregister_own(agent: Agent) -> AgentHooks:
    """Brain's entries out of its file: the file is deleted when nothing else is in it, else
    kept with what the user added (their own hooks, keys of theirs)."""
    path = agent.settings_path()
    loaded = _load_own(path)
    if isinstance(loaded, str):
        return _refused(agent.name, path, "unparseable", loaded, "", "Remove brain's file by hand")
    text, doc = loaded
    record = _record()
    created = record.pop(str(path), [])
    if doc is None:
        return AgentHooks(agent.name, str(path), "absent", (), None)
    found = _own_commands(doc) or []
    ours = [(e, i, c) for e, i, _, c in found if brain_args(c) is not None]
    if len(ours) == len(found) and set(doc) <= {"version", "hooks"}:
        try:
            path.unlink()
        except OSError as exc:
            why = f"cannot be deleted ({exc.strerror})"
            return _refused(agent.name, path, "failed", why, "", "")
        for folder in (c.removeprefix("dir:") for c in created if c.startswith("dir:")):
            with contextlib.suppress(OSError):
                Path(folder).rmdir()  # only when empty
    elif not ours:
        return AgentHooks(agent.name, str(path), "absent", (), None)
    else:
        new = text
        for event, i, _ in reversed(ours):  # the last first: the indices before it hold
            new = jsonedit.delete(new, ("hooks", event, i))
        for event in dict.fromkeys(e for e, _, _ in ours):
            if json.loads(new)["hooks"][event] == []:  # it held brain's entries only
                new = jsonedit.delete(new, ("hooks", event))
        problem = _write(_File(path, text, True), new)
        if problem:
            action = "read-only" if problem == "is read-only" else "failed"
            return _refused(agent.name, path, action, problem, "", "Remove brain's entries by hand")
        record[str(path)] = created  # kept with the user's hooks: still brain's file for `on`
    _save_record(record)
    first = str(ours[0][2]) if ours else ""
    return AgentHooks(agent.name, str(path), "removed", tuple(e for e, _, _ in ours), first or None)


# --- what is on ----------------------------------------------------------------------------------


@dataclass(frozen=True)
class HarnessState:
    agent: str
    label: str
    found: bool  # the program or its config folder is on this machine
    settings: str
    pack: str  # on | off | partial | n/a (the harness cannot carry it)
    prime: str
    settle: str
    problem: str | None  # why the file cannot be read (None when it can)
    note: str | None  # what the harness needs besides (a flag, a trust step), or cannot carry


def _row_state(agent: str, row: HookRow, doc: dict[str, Any]) -> str:
    covered = [
        any(
            covers(m, matcher) and _on(agent, e, row.args[0])
            for _, _, m, e in _entries(doc, row.event)
        )
        for matcher in row.matchers
    ]
    return "on" if all(covered) else "partial" if any(covered) else "off"


def turned_off(name: str) -> tuple[str, str] | None:
    """(why, fix) when agent `name`'s own config turns every hook off, brain's entries though
    registered then running nowhere; None when it does not."""
    agent = AGENTS[name]
    if name == "codex":
        config_toml = agent.folder() / "config.toml"
        found = re.search(r"(?m)^\s*((?:codex_)?hooks)\s*=\s*false\b", _read_text(config_toml))
        if found:
            return (
                "hooks are off in config.toml ([features] hooks = false)",
                f"remove `{found[1]} = false` from {config_toml}",
            )
    if name == "gemini":
        try:
            doc = json.loads(_read_text(agent.settings_path()) or "{}")
        except ValueError:
            return None
        for key in ("hooksConfig", "hooks"):
            block = doc.get(key) if isinstance(doc, dict) else None
            if isinstance(block, dict) and block.get("enabled") is False:
                return (
                    f"hooks are off in settings.json ({key}.enabled = false)",
                    f'set "{key}": {{"enabled": true}} in {agent.settings_path()}',
                )
    return None


def _note(agent: Agent) -> str | None:
    """What the agent needs besides brain's entries, read from its own config."""
    off = turned_off(agent.name)
    if off:
        return off[0]
    if agent.name == "codex":
        return "Codex runs a new hook only once you trust it: open /hooks in Codex"
    if agent.name == "gemini":
        return None
    return "; ".join(v for (a, _), v in CANNOT.items() if a == agent.name) or None


def _read_text(path: Path) -> str:
    try:
        return path.read_text(encoding="utf-8")
    except (OSError, UnicodeDecodeError):
        return ""


def state(name: str) -> HarnessState:
    """Which of brain's hooks are on in agent `name`'s config (read only)."""
    agent = AGENTS[name]
    path = agent.settings_path()
    rows = {r.args[0]: r for r in HOOKS if r.agent == name}
    roles = {role: "n/a" if role not in rows else "off" for role in ROLES}
    problem: str | None = None
    stale = False  # an entry of brain's that `hooks on` would bring up to date
    if agent.own_file:
        loaded = _load_own(path)
        if isinstance(loaded, str):
            problem = f"{path} {loaded}"
        elif loaded[1] is not None:
            found = _own_commands(loaded[1]) or []
            for verb, row in rows.items():
                on = any(e == row.event and _on(name, d, verb) for e, _, d, _ in found)
                roles[verb] = "on" if on else "off"
            fresh, added = _own_registered(agent, loaded[0], None)
            stale = fresh != loaded[0] and not added  # a missing one shows as "off"
    else:
        got = _load(path, sorted({r.event for r in rows.values()}))
        if isinstance(got, str):
            problem = f"{path} {got}"
        elif got.text:
            doc = json.loads(got.text)
            for verb, row in rows.items():
                roles[verb] = _row_state(name, row, doc)
            stale = _registered(name, got.text, None, [])[2]
    notes = [n for n in (_note(agent), STALE if stale else "") if n]
    return HarnessState(
        name,
        agent.label,
        agent.found(),
        str(path),
        roles["pack"],
        roles["prime"],
        roles["settle"],
        problem,
        "; ".join(notes) or None,
    )


# VS Code's agent mode keeps no hook file of brain's: it runs the hooks of ~/.claude/settings.json
# and of ~/.copilot/hooks (microsoft/vscode-docs docs/copilot/customization/hooks.md, "Hook file
# locations"), ignoring matchers, so brain's hooks there are on in VS Code as they are.
VSCODE_NOTE = (
    "VS Code runs the hooks of ~/.claude/settings.json and ~/.copilot/hooks (matchers ignored: "
    "brain answers each session start once); it reads no context from a prompt hook"
)


def vscode_state(claude: HarnessState, copilot: HarnessState) -> HarnessState:
    """VS Code's row of `brain hooks status`, from the two configs it runs."""
    import shutil

    found = any(shutil.which(p) for p in ("code", "code-insiders"))
    found = found or (Path.home() / ".vscode").is_dir()

    def either(a: str, b: str) -> str:
        return "on" if "on" in (a, b) or "partial" in (a, b) else "off"

    return HarnessState(
        "vscode",
        "VS Code",
        found,
        f"{claude.settings} and {copilot.settings}",
        either(claude.pack, copilot.pack),
        "n/a",
        either(claude.settle, copilot.settle),
        None,
        VSCODE_NOTE,
    )


def brain_commands(name: str) -> tuple[str, ...]:
    """The commands of brain's hook entries in agent `name`'s config, for doctor to check that
    the program each starts still exists (none when the file is absent or cannot be read)."""
    agent = AGENTS[name]
    path = agent.settings_path()
    if agent.own_file:
        loaded = _load_own(path)
        found = [] if isinstance(loaded, str) else _own_commands(loaded[1]) or []
        return tuple(str(c) for *_, c in found if brain_args(c) is not None)
    got = _load(path, sorted({r.event for r in HOOKS if r.agent == name}))
    if isinstance(got, str) or not got.text:
        return ()
    return tuple(_ours(json.loads(got.text)))
