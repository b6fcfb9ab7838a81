"""`brain install [PATH]` and `brain uninstall`: set a vault up, hook it in, and take it out again.

Install chooses the vault (PATH, else BRAIN_VAULT, else the recorded one, else ~/Documents/Brain;
nothing is searched for), creates it as a git repository with the starter AI/ (its first commit)
when it does not exist, records it, puts `brain` on PATH, points the vault's git hooks at brain,
builds the index and registers brain's hooks (pack at session start, prime at each prompt, settle
at each stop) in Claude Code and every other agent found on this machine (brain.agent_hooks).
Every step is idempotent: a second install changes nothing, and an install with another PATH moves
to that vault (the old one gets its own hooks back). Uninstall undoes each step, stops the
background worker, never touches the vault's files or history, and names the state it leaves.
"""

from __future__ import annotations

import contextlib
import errno
import json
import os
import shlex
import shutil
import sys
import time
from dataclasses import dataclass
from pathlib import Path

from brain import agent_hooks, config, githooks, gitutil, index, shipped, worker_client
from brain.errors import BrainError
from brain.files import read_json_dict, write_atomic
from brain.settings import current
from brain.text import has_surrogates, printable, undecodable


@dataclass(frozen=True)
class VaultChoice:
    path: Path
    origin: str  # "argument" | "BRAIN_VAULT" | "recorded" | "default"
    exists: bool
    empty: bool  # exists with nothing in it
    is_repo: bool
    has_ai: bool

    @property
    def needs_init(self) -> bool:
        """An existing folder with content that is not a git repository: ask before `git init`."""
        return self.exists and not self.empty and not self.is_repo


@dataclass(frozen=True)
class PathLink:
    path: str  # the link (or wrapper script) brain manages, e.g. ~/.local/bin/brain
    target: str | None  # the brain executable it runs (None when not known)
    action: str  # created | updated | kept | on-path | exists | failed | removed | absent
    on_path: bool  # whether the link's folder is on PATH
    message: str | None = None  # a note or what went wrong (None when nothing to say)


@dataclass(frozen=True)
class IndexBuilt:
    path: str
    file_count: int
    bullet_count: int
    built_at: str
    ms: float


@dataclass(frozen=True)
class InstallResult:
    vault: str
    origin: str
    created: bool  # the folder did not exist
    git_init: bool  # `git init` ran
    starter: tuple[str, ...]  # starter files added (vault-relative)
    commit: str | None  # the first commit brain made of them in the repository it created
    recorded: str  # the file that records the vault
    moved_from: str | None  # the vault recorded before, when it was another one
    path_link: PathLink
    git_hooks: githooks.GitHooks
    index: IndexBuilt
    claude: agent_hooks.AgentHooks
    agents: tuple[agent_hooks.AgentHooks, ...]  # the other harnesses found on this machine
    sync: str | None  # with BRAIN_CONNECT=URL: what connecting did, in one line; None otherwise
    next: str  # what to do now, in one sentence


@dataclass(frozen=True)
class Planned:
    """One thing `brain install` would write or run (`--dry-run`), or find already in place."""

    what: (
        str  # vault | git repository | starter file | first commit | record | PATH link | git hooks
    )
    # | index | agent hooks | merge driver | remote
    path: str  # the file or folder it writes (for a remote, its URL)
    action: str  # create | update | keep | remove | ask (first, at a terminal) | refuse
    detail: str | None  # what it holds, or why (None when nothing to add)


@dataclass(frozen=True)
class InstallPlan:
    vault: str
    origin: str
    steps: tuple[Planned, ...]
    next: str  # the command that does it


@dataclass(frozen=True)
class UninstallResult:
    vault: str | None  # the recorded vault, left as it is
    recorded: str | None  # the record file removed
    path_link: PathLink
    git_hooks: tuple[githooks.GitHooks, ...]  # one per vault brain had hooked
    indexes: tuple[str, ...]  # index files removed (disposable; `brain reindex` rebuilds them)
    claude: agent_hooks.AgentHooks
    agents: tuple[agent_hooks.AgentHooks, ...]  # the other harnesses brain's hooks left
    workers: tuple[int, ...]  # pids of the background workers stopped
    left: tuple[str, ...]  # brain's folders left in place (lookups, transcripts, settings)


# --- the vault -----------------------------------------------------------------------------------


def default_vault() -> Path:
    return Path.home() / "Documents" / "Brain"


def choose_vault(path: str | Path | None = None) -> VaultChoice:
    """The vault install would use, and what state it is in; a BrainError for unusable paths."""
    if path:
        origin, raw = "argument", Path(path)
    elif current().vault:
        origin, raw = "BRAIN_VAULT", Path(current().vault)
    else:
        recorded = config.recorded_vault()
        origin, raw = ("recorded", recorded) if recorded else ("default", default_vault())
    vault = (Path.cwd() / raw.expanduser()).resolve()
    source = "" if origin == "argument" else f" (from {origin})"
    if has_surrogates(str(vault)):  # before anything is made: the record would fail last
        raise BrainError(
            f"{printable(str(vault))} is not valid UTF-8 ({undecodable(str(vault))}){source}: "
            "brain writes the vault's path as text (its record, the hooks, git's config)",
            "rename the folder, or pick another, then install again",
        )
    if vault.exists() and not vault.is_dir():
        raise BrainError(
            f"{vault} is a file, not a folder{source}",
            "give a folder for the vault, e.g. `brain install ~/Documents/Brain`",
        )
    if not vault.exists():
        return VaultChoice(vault, origin, False, True, False, False)
    try:
        empty = not any(vault.iterdir())
    except OSError as exc:
        raise BrainError(
            f"cannot read {vault}: {exc.strerror}", "check its permissions, or pick another folder"
        ) from exc
    is_repo = gitutil.is_repo(vault)
    if is_repo:
        top = gitutil.toplevel(vault)
        if top is None:
            raise BrainError(
                f"{vault} is a bare git repository (or inside .git){source}",
                "a vault needs a working tree: clone it and install the clone",
            )
        if top.resolve() != vault:
            raise BrainError(
                f"{vault} is inside the git repository {top}{source}",
                f"a vault is the top of its own repository: `brain install {top}` (it needs an "
                "AI/ folder at its top), or pick a folder outside it",
            )
    return VaultChoice(vault, origin, True, empty, is_repo, (vault / "AI").is_dir())


def _add_starter(vault: Path) -> tuple[str, ...]:
    """The starter AI/ files that are missing (never overwrites anything: one that appears while
    install runs is kept, and nothing is written through a folder that is a link out)."""
    from brain.files import Changed, replace

    added = []
    for name in shipped.STARTER_FILES:
        try:
            replace(vault, f"AI/{name}", shipped.starter_file(name).encode("utf-8"), was=None)
        except Changed:
            continue
        added.append(f"AI/{name}")
    return tuple(added)


STARTER_MESSAGE = "brain: the starter AI/ files"


def _first_commit(vault: Path, files: tuple[str, ...]) -> tuple[str, str]:
    """Commit the starter files (only them) in a repository brain created: (short id, "") or
    ("", what git said)."""
    add = gitutil.run(vault, "add", "--", *files, check=False)
    proc = (
        add
        if add.returncode
        else gitutil.run(vault, "commit", "-q", "-m", STARTER_MESSAGE, "--", *files, check=False)
    )
    if proc.returncode:
        said = proc.stderr.decode("utf-8", "replace").strip().splitlines()
        return "", said[-1] if said else f"git exited {proc.returncode}"
    head = gitutil.run(vault, "rev-parse", "--short=12", "HEAD")
    return head.stdout.decode().strip(), ""


def _next_step(
    vault: Path, starter: tuple[str, ...], commit: str, problem: str, bullets: int
) -> str:
    if bullets:
        first = (
            "start a Claude Code session in a repository the vault knows (`brain pack` briefs "
            "it), or ask the vault yourself: brain find WORDS"
        )
    else:
        first = (
            f"write your first fact as a bullet in {vault / 'AI' / 'MEMORY.md'} (the file "
            "shows the form; `brain lint` checks it), commit it, and `brain find WORDS` finds it"
        )
    if starter and not commit:
        why = f" (git said: {problem})" if problem else ""
        add = " ".join(starter)
        return (
            f"Next: commit the starter files{why}: git -C {vault} add {add} && git -C {vault} "
            f"commit -m 'starter'; then {first}"
        )
    return f"Next: {first}"


def _record(vault: Path) -> Path:
    path = config.recorded_vault_file()
    try:
        write_atomic(path, f"{vault}\n")
    except OSError as exc:
        raise BrainError(
            f"cannot record the vault in {path}: {exc.strerror}",
            "make the config folder writable, or set XDG_CONFIG_HOME to a writable folder",
        ) from exc
    return path


# --- PATH ----------------------------------------------------------------------------------------


def bin_dir() -> Path:
    """Where brain links itself: BRAIN_BINDIR, else ~/.local/bin (on PATH in most shells)."""
    custom = current().bin_dir
    return Path(custom).expanduser() if custom else Path.home() / ".local" / "bin"


def _link_record() -> Path:
    return config.config_dir() / "path-link.json"


def _on_path(folder: Path) -> bool:
    want = os.path.realpath(folder)
    return any(
        os.path.realpath(Path(p).expanduser()) == want
        for p in current().env.get("PATH", "").split(os.pathsep)
        if p
    )


def _own_link(link: Path) -> bool:
    """The link or wrapper is one brain made (recorded at the time, and unchanged since)."""
    record = read_json_dict(_link_record())
    if record.get("link") != str(link):
        return False
    if link.is_symlink():
        return str(link.readlink()) == record.get("target")
    return link.is_file() and shipped.is_brain_file(link)


# The shell profiles install.sh adds its PATH line to (by $SHELL: zsh, bash, fish, else sh), and
# the comment it writes above that line (install.sh, "PATH and the vault").
PROFILES = (".zshrc", ".bashrc", ".config/fish/config.fish", ".profile")
INSTALLER_MARK = "# added by brain's installer"


def _shown(folder: Path) -> str:
    home = Path.home()
    return f"$HOME/{folder.relative_to(home)}" if folder.is_relative_to(home) else str(folder)


def _path_hint(folder: Path) -> str:
    """What to do about `folder` not being on PATH: open a new shell when a profile already puts
    it there (install.sh adds that line before it runs `brain install`), else add it."""
    if sys.platform == "win32":
        return windows_path_hint(folder, _user_path())
    for profile, _line in profile_lines(folder):
        return f"{folder} is not on this shell's PATH yet; {profile} adds it: open a new shell"
    shown = _shown(folder)
    return f'{folder} is not on PATH; add it in your shell profile: export PATH="{shown}:$PATH"'


def windows_path_hint(folder: Path, user_path: str) -> str:
    """Windows has no shell profile: a new terminal reads the user's PATH from the registry,
    where install.ps1 adds the folder before it runs `brain install`."""
    held = {os.path.normcase(os.path.normpath(p)) for p in user_path.split(";") if p.strip()}
    if os.path.normcase(os.path.normpath(folder)) in held:
        return f"{folder} is on your user PATH but not yet this terminal's: open a new terminal"
    return (
        f"{folder} is not on PATH; add it to your user PATH (Settings > Environment Variables), "
        "then open a new terminal"
    )


def _user_path() -> str:
    """The user's own PATH as a new Windows terminal will read it (HKCU\\Environment)."""
    if sys.platform != "win32":
        return ""
    import winreg

    try:
        with winreg.OpenKey(winreg.HKEY_CURRENT_USER, "Environment") as key:
            value = winreg.QueryValueEx(key, "Path")[0]
    except OSError:
        return ""
    return str(value)


def profile_lines(folder: Path, *, installer: bool = False) -> list[tuple[Path, int]]:
    """(profile, line number) of each line in the shell profiles that puts `folder` on PATH (an
    `export PATH=...` or fish's `fish_add_path` naming it); with `installer`, only the lines
    brain's installer added (the line under its comment)."""
    home = Path.home()
    names = {str(folder), _shown(folder), f"${{HOME}}/{_shown(folder).removeprefix('$HOME/')}"}
    if folder.is_relative_to(home):
        names.add(f"~/{folder.relative_to(home)}")
    found = []
    for rel in PROFILES:
        profile = home / rel
        try:
            lines = profile.read_text(encoding="utf-8", errors="replace").split("\n")
        except OSError:
            continue
        for n, line in enumerate(lines, start=1):
            text = line.strip()
            if text.startswith("#") or not ("PATH" in text or "fish_add_path" in text):
                continue
            if not any(name in text for name in names):
                continue
            if installer and not (n > 1 and lines[n - 2].strip().startswith(INSTALLER_MARK)):
                continue
            found.append((profile, n))
    return found


def _place_link(link: Path, target: str) -> str:
    """Create or replace brain's link atomically; a wrapper script where links are not allowed."""
    link.parent.mkdir(parents=True, exist_ok=True)
    tmp = link.with_name(f".{link.name}.{os.getpid()}.tmp")
    try:
        tmp.symlink_to(target)
    except OSError as exc:
        if exc.errno in (errno.EACCES, errno.EROFS, errno.ENOTDIR, errno.ENOSPC):
            raise
        wrapper = (
            f"#!/bin/sh\n# {shipped.HOOK_ID} (brain install: PATH wrapper)\n"
            f'exec {shlex.quote(target)} "$@"\n'
        )
        write_atomic(link, wrapper, mode=0o755)
        return "wrapper"
    try:
        tmp.replace(link)
    except OSError:
        tmp.unlink()
        raise
    return "symlink"


def link_brain(exe: Path | None, *, write: bool = True) -> PathLink:
    """Put `brain` on PATH when it is not: a link in `bin_dir()` to the running executable.
    With `write` False, what it would do, nothing written (`brain install --dry-run`)."""
    folder = bin_dir()
    link = folder / "brain"
    on_path = _on_path(folder)
    if exe is None:
        return PathLink(
            str(link),
            None,
            "failed",
            on_path,
            "cannot tell which brain executable is running; run `brain install` through it",
        )
    target = str(exe)
    if link.is_symlink() or link.exists():
        if _own_link(link):
            same = link.is_symlink() and os.path.realpath(link) == target
            action = "kept" if same else "updated"
        elif os.path.realpath(link) == target:
            action = "exists"  # someone else's link to this very brain: fine, never ours to remove
        else:
            return PathLink(
                str(link),
                target,
                "exists",
                on_path,
                f"{link} is not brain's link; left alone (remove it, or set BRAIN_BINDIR)",
            )
        if action != "updated":
            hint = None if on_path else _path_hint(folder)
            return PathLink(str(link), target, action, on_path, hint)
    else:
        found = shutil.which("brain")
        if found and os.path.realpath(found) == target:
            return PathLink(str(link), target, "on-path", on_path, f"brain is on PATH as {found}")
        action = "created"
    if not write:
        return PathLink(str(link), target, action, on_path, None if on_path else _path_hint(folder))
    try:
        kind = _place_link(link, target)
        write_atomic(
            _link_record(), json.dumps({"link": str(link), "target": target, "kind": kind}) + "\n"
        )
    except OSError as exc:
        return PathLink(
            str(link),
            target,
            "failed",
            on_path,
            f"cannot write {link} ({exc.strerror}); add {exe.parent} to PATH yourself, or set "
            "BRAIN_BINDIR to a writable folder on PATH and install again",
        )
    return PathLink(str(link), target, action, on_path, None if on_path else _path_hint(folder))


def unlink_brain() -> PathLink:
    """Remove brain's link; the PATH line the installer added to a shell profile is named, not
    removed: the folder (~/.local/bin) is every user-installed program's, not brain's alone."""
    record = _link_record()
    try:
        data = json.loads(record.read_text(encoding="utf-8"))
    except (OSError, ValueError):
        data = None
    if not isinstance(data, dict) or not isinstance(data.get("link"), str):
        link = bin_dir() / "brain"
        return PathLink(str(link), None, "absent", _on_path(link.parent), _profile_note(link))
    link = Path(data["link"])
    target = str(data["target"]) if data.get("target") else None
    if _own_link(link):
        try:
            link.unlink()
        except OSError as exc:
            return PathLink(
                str(link), target, "failed", False, f"cannot remove {link}: {exc.strerror}"
            )
        action, message = "removed", None
    else:
        action, message = "absent", None
        if link.is_symlink() or link.exists():
            action, message = "kept", f"{link} is no longer brain's link; left alone"
    with contextlib.suppress(FileNotFoundError):
        record.unlink()
    note = _profile_note(link)
    if note:
        message = f"{message}; {note}" if message else note
    return PathLink(str(link), target, action, _on_path(link.parent), message)


def _profile_note(link: Path) -> str | None:
    """The lines brain's installer added to put the link's folder on PATH, left for the person."""
    found = profile_lines(link.parent, installer=True)
    if not found:
        return None
    where = ", ".join(f"{profile}:{n - 1}-{n}" for profile, n in found)
    return (
        f"the installer's line that puts {link.parent} on PATH is still in {where} "
        "(under its comment); delete it unless other programs you use live there"
    )


# --- the commands --------------------------------------------------------------------------------


def _build_index(vault: Path) -> IndexBuilt:
    start = time.perf_counter()
    report = index.sync(vault, history=True)  # the notes' git dates, read once here
    from brain import drift

    drift.update(vault)  # and the histories of the code the bullets name
    ms = round((time.perf_counter() - start) * 1000, 1)
    return IndexBuilt(str(config.index_path(vault)), report.files, report.bullets, report.built, ms)


def install(choice: VaultChoice, *, init: bool = False) -> InstallResult:
    """Set up `choice` as the vault; `init` allows `git init` in an existing folder."""
    vault = choice.path
    if choice.needs_init and not init:
        raise BrainError(
            f"{vault} is not a git repository",
            f"pass --init to make it one and install there: brain install --init {vault}",
        )
    try:
        vault.mkdir(parents=True, exist_ok=True)
    except OSError as exc:
        raise BrainError(
            f"cannot create {vault}: {exc.strerror}", "pick a folder you can write to"
        ) from exc
    if not choice.is_repo:
        gitutil.run(vault, "init", "-q")
    try:
        starter = () if choice.has_ai else _add_starter(vault)
    except OSError as exc:
        raise BrainError(
            f"cannot write the starter AI/ files in {vault}: {exc.strerror}",
            "make the vault writable and run `brain install` again",
        ) from exc
    commit, problem = "", ""
    if starter and not choice.is_repo:  # brain made the repository: give it a first commit
        commit, problem = _first_commit(vault, starter)
    try:
        before = config.recorded_vault()
    except BrainError:
        before = None
    recorded = _record(vault)
    moved_from = None
    if before is not None and before.expanduser().resolve() != vault:
        moved_from = str(before)
        old = before.expanduser().resolve()
        if old.is_dir() and githooks.hooks_dir(old).exists():
            githooks.uninstall_git_hooks(old)
    exe = shipped.brain_executable()
    link = link_brain(exe)
    git_hooks = githooks.install_git_hooks(vault, str(Path(sys.executable).absolute()))
    built = _build_index(vault)
    from brain.commands import hooks as harness_hooks

    claude = agent_hooks.register("claude")
    agents = tuple(agent_hooks.register(n) for n in harness_hooks.wanted() if n != "claude")
    synced = _sync_setup(vault)
    return InstallResult(
        str(vault),
        choice.origin,
        not choice.exists,
        not choice.is_repo,
        starter,
        commit or None,
        str(recorded),
        moved_from,
        link,
        git_hooks,
        built,
        claude,
        agents,
        synced,
        _next_step(vault, starter, commit, problem, built.bullet_count),
    )


def plan(choice: VaultChoice, *, init: bool = False) -> InstallPlan:
    """What `install(choice, init=init)` would write, run or leave as it is, each decided by
    the code install runs (link_brain, githooks.install_git_hooks, agent_hooks.state), with
    nothing written: not the vault, not brain's folders, not an agent's settings."""
    vault = choice.path
    steps = [Planned("vault", str(vault), "keep" if choice.exists else "create", None)]
    if not choice.is_repo:
        ask = choice.needs_init and not init
        said = "git init; asked first at a terminal, --init says yes" if ask else "git init"
        steps.append(
            Planned("git repository", str(vault / ".git"), "ask" if ask else "create", said)
        )
    if not choice.has_ai:
        steps += [Planned("starter file", str(vault / "AI" / n), "create", None) for n in STARTERS]
        if not choice.is_repo:
            said = f"of the starter files: {STARTER_MESSAGE!r}"
            steps.append(Planned("first commit", str(vault), "create", said))
    steps += _plan_record(vault)
    link = link_brain(shipped.brain_executable(), write=False)
    steps.append(Planned("PATH link", link.path, _LINK_ACTIONS[link.action], link.message))
    steps.append(_plan_git_hooks(choice))
    index_file = config.index_path(vault, make=False)
    built = "brought up to date" if index_file.exists() else "built"
    steps.append(
        Planned("index", str(index_file), "update" if index_file.exists() else "create", built)
    )
    steps += _plan_agent_hooks()
    steps.append(_plan_driver(choice))
    url = current().connect
    if url:
        steps.append(Planned("remote", url, "create", "BRAIN_CONNECT: brain sync connect"))
    again = (
        "brain install" + (" --init" if choice.needs_init else "") + f" {shlex.quote(str(vault))}"
    )
    return InstallPlan(str(vault), choice.origin, tuple(steps), again)


STARTERS = shipped.STARTER_FILES
_LINK_ACTIONS = {
    "created": "create",
    "updated": "update",
    "kept": "keep",
    "on-path": "keep",
    "exists": "keep",
    "failed": "refuse",
}


def _plan_record(vault: Path) -> list[Planned]:
    record = config.recorded_vault_file()
    try:
        before = config.recorded_vault()
    except BrainError as exc:  # unreadable: install writes it anew
        return [Planned("record", str(record), "update", exc.message)]
    if before is None:
        return [Planned("record", str(record), "create", str(vault))]
    old = before.expanduser().resolve()
    if old == vault:
        return [Planned("record", str(record), "keep", str(vault))]
    steps = [Planned("record", str(record), "update", f"{vault}, was {before}")]
    if old.is_dir() and githooks.hooks_dir(old).exists():
        said = f"{old} gets its own hooks back"
        steps.append(Planned("git hooks", str(githooks.hooks_dir(old)), "remove", said))
    return steps


def _plan_git_hooks(choice: VaultChoice) -> Planned:
    vault = choice.path
    if not choice.is_repo:  # git init comes first: nothing to read yet
        return Planned("git hooks", str(githooks.hooks_dir(vault)), "create", "core.hooksPath")
    done = githooks.install_git_hooks(vault, str(Path(sys.executable).absolute()), write=False)
    action = {"installed": "create", "updated": "update"}.get(done.action, "keep")
    runs = f"; they run {done.chains}'s first" if done.chains else ""
    return Planned("git hooks", done.dir, action, f"{', '.join(done.hooks)}{runs}")


def _plan_agent_hooks() -> list[Planned]:
    from brain.commands import hooks as harness_hooks

    steps = []
    for name in ["claude", *(n for n in harness_hooks.wanted() if n != "claude")]:
        st = agent_hooks.state(name)
        if st.problem:
            steps.append(Planned("agent hooks", st.settings, "refuse", st.problem))
            continue
        off = [r for r in agent_hooks.ROLES if getattr(st, r) in ("off", "partial")]
        action = "create" if not Path(st.settings).exists() else "update" if off else "keep"
        said = f"{st.label}: {', '.join(off)}" if off else st.label
        steps.append(Planned("agent hooks", st.settings, action, said))
    return steps


def _plan_driver(choice: VaultChoice) -> Planned:
    from brain import gitsync, merge

    said = "merges the vault's Markdown line by line"
    if not choice.is_repo:
        return Planned("merge driver", str(choice.path / ".git" / "config"), "create", said)
    config_file = gitsync.git_dir(choice.path) / "config"  # a worktree's .git is a file
    known = gitsync.read_config(choice.path).get("merge.brain.driver") == merge.driver_command()
    return Planned("merge driver", str(config_file), "keep" if known else "update", said)


def _sync_setup(vault: Path) -> str | None:
    """Register brain's merge driver in the vault (any merge there goes line by line); with
    BRAIN_CONNECT=URL, connect to it. A remote out of reach is said, never fatal."""
    from brain import gitsync

    gitsync.ensure_driver(vault)
    url = current().connect
    if not url:
        return None
    try:
        return gitsync.connect(vault, url).summary
    except BrainError as exc:
        return f"not connected: {exc}"


def _remove_indexes() -> list[str]:
    """Delete every index in the state dir and every pack cached from one (all rebuilt on
    demand): those of the vaults brain hooked and of any other vault a `--vault` or BRAIN_VAULT
    named, so that uninstall leaves no index behind while saying it deleted the indexes."""
    folder = config.index_dir()
    removed = []
    for path in sorted(folder.glob("*.sqlite*")) if folder.is_dir() else []:
        with contextlib.suppress(FileNotFoundError):
            path.unlink()  # the index, its -wal, -shm, -journal and a build's .tmp-PID
            if path.suffix == ".sqlite":
                removed.append(str(path))
    with contextlib.suppress(OSError):
        shutil.rmtree(folder.parent / "packs")
    return removed


def _left() -> tuple[str, ...]:
    """brain's own folders that still hold files, once their empty folders are gone: what
    uninstall leaves for the user to delete (the lookup log, recall's transcripts.db and opt-ins,
    brain.yaml: the user's data and choices, not brain's to destroy)."""
    left = []
    for folder in (config.state_dir(), config.config_dir(), config.data_dir()):
        for root, _dirs, _files in sorted(os.walk(folder), reverse=True):  # deepest first
            with contextlib.suppress(OSError):
                Path(root).rmdir()  # only when empty
        if folder.is_dir() and str(folder) not in left:  # one folder on macOS, named once
            left.append(str(folder))
    return tuple(left)


def uninstall() -> UninstallResult:
    """Undo install: hooks, core.hooksPath, SessionStart entries, PATH link, record, index."""
    try:
        recorded = config.recorded_vault()
    except BrainError:
        recorded = None
    current = recorded.expanduser().resolve() if recorded else None
    vaults = [(v.expanduser().resolve(), folder) for v, folder in githooks.installed_vaults()]
    if current is not None and current not in {v for v, _ in vaults}:
        vaults.append((current, githooks.hooks_dir(current)))
    workers = worker_client.stop_all(v for v, _ in vaults)  # before their index goes
    results = []
    for vault, folder in vaults:
        result = githooks.uninstall_git_hooks(vault, folder)
        if vault.is_dir() and gitutil.is_repo(vault):
            from brain import gitsync

            gitsync.forget_driver(vault)
        if result.action != "absent" or vault == current:
            results.append(result)
    indexes = _remove_indexes()
    record_file = config.recorded_vault_file()
    removed_record = None
    with contextlib.suppress(FileNotFoundError):
        record_file.unlink()
        removed_record = str(record_file)
    from brain.commands import hooks as harness_hooks

    claude = agent_hooks.unregister("claude")
    agents = harness_hooks.others_off()
    link = unlink_brain()
    return UninstallResult(
        str(recorded) if recorded else None,
        removed_record,
        link,
        tuple(results),
        tuple(indexes),
        claude,
        agents,
        tuple(workers),
        _left(),
    )
