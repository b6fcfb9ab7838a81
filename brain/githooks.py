"""Brain's git hooks in the vault: generated, pointed at, chained, and taken out again.

Git hooks are generated from `hooks/hook-tmpl` (shipped as `brain.hooks_data`) into a folder of
the user config dir, one per vault, and the vault's *local* `core.hooksPath` points there. Each
generated hook names its generator on its second line (`HOOK_ID`), bakes in the absolute
interpreter that runs brain with `brain` on PATH as the fallback, and chains to the hook that was in
place before (another tool's `core.hooksPath`, else `.git/hooks`) and to the user's global
`core.hooksPath`, which a repository-local one would otherwise shadow. Brain recognises its own
files by the ID line and never overwrites or deletes anything else.

Agents' hooks (Claude Code's SessionStart and the like) live in brain.agent_hooks; the ID line,
the shipped files and brain's executable, which both use, in brain.shipped.
"""

from __future__ import annotations

import contextlib
import hashlib
import os
import re
import shlex
from dataclasses import dataclass
from pathlib import Path

from brain import __version__, gitutil
from brain.config import config_dir, state_dir
from brain.errors import BrainError
from brain.files import write_atomic
from brain.shipped import HOOK_ID, is_brain_file, resource

BRAIN_HOOKS = ("pre-commit", "commit-msg", "post-commit")
VAULT_MARKER = "brain-vault.txt"  # in each generated folder: the vault it serves (for uninstall)
PREVIOUS_KEY = "brain.previousHooksPath"  # another tool's core.hooksPath, restored on uninstall
# githooks(5): the names git runs. A hook of another name is never chained (git never runs it).
GIT_HOOK_NAMES = frozenset(
    """applypatch-msg pre-applypatch post-applypatch pre-commit pre-merge-commit
    prepare-commit-msg commit-msg post-commit pre-rebase post-checkout post-merge pre-push
    pre-receive update proc-receive post-receive post-update reference-transaction
    push-to-checkout pre-auto-gc post-rewrite sendemail-validate fsmonitor-watchman p4-changelist
    p4-prepare-changelist p4-post-changelist p4-pre-submit post-index-change""".split()
)


def hook_template() -> str:
    return resource("brain.hooks_data", "hooks", "hook-tmpl")


# --- git hooks -----------------------------------------------------------------------------------


@dataclass(frozen=True)
class GitHooks:
    vault: str
    dir: str  # where brain's hooks are (the vault's core.hooksPath while installed)
    hooks: tuple[str, ...]  # hook names written (install) or deleted (uninstall)
    previous: str | None  # another tool's core.hooksPath that brain chains to / restored
    chains: str | None  # the folder whose hooks brain's hooks run first (None when none)
    action: str  # "installed" | "updated" | "removed" | "absent" | "left" (dry run: "kept")
    message: str | None = None  # why brain left them, when it did


def hooks_root() -> Path:
    return config_dir() / "hooks"


def hooks_dir(vault: Path) -> Path:
    """Brain's hook folder for `vault`: one per vault, as the index is, named to be recognisable."""
    digest = hashlib.sha256(str(vault).encode("utf-8")).hexdigest()[:12]
    slug = re.sub(r"[^A-Za-z0-9]+", "-", vault.name).strip("-").lower() or "vault"
    return hooks_root() / f"{slug}-{digest}"


def post_commit_log(vault: Path, *, make: bool = True) -> Path:
    return state_dir(make=make) / "logs" / f"{hooks_dir(vault).name}-post-commit.log"


def render_hook(name: str, *, brain_py: str, previous_dir: str, log: Path) -> str:
    values = {
        "@ID_QUOTED@": shlex.quote(HOOK_ID),
        "@ID@": HOOK_ID,
        "@VERSION@": __version__,
        "@HOOK@": shlex.quote(name),
        "@BRAIN_PY@": shlex.quote(brain_py),
        "@PREVIOUS_DIR@": shlex.quote(previous_dir),
        "@LOG@": shlex.quote(str(log)),
    }
    text = hook_template()
    for key, value in values.items():
        text = text.replace(key, value)
    return text


def _config(vault: Path, *args: str) -> str | None:
    proc = gitutil.run(vault, "config", "--local", *args, check=False)
    if proc.returncode != 0:
        return None
    return proc.stdout.decode("utf-8", "replace").rstrip("\n")


def _set_config(vault: Path, key: str, value: str | None) -> None:
    if value is None:
        proc = gitutil.run(vault, "config", "--local", "--unset-all", key, check=False)
        if proc.returncode not in (0, 5):  # 5: the key was not set
            gitutil.run(vault, "config", "--local", "--unset-all", key)
    else:
        gitutil.run(vault, "config", "--local", key, value)


def _absolute(vault: Path, value: str) -> Path:
    path = Path(value).expanduser()
    return path if path.is_absolute() else vault / path


def _is_brain_dir(folder: Path) -> bool:
    """A folder brain generated: under its hooks root, or holding hooks with brain's ID line."""
    try:
        resolved = folder.resolve()
        if resolved.is_relative_to(hooks_root().resolve()):
            return True
    except OSError:
        return False
    return any(is_brain_file(folder / name) for name in BRAIN_HOOKS)


def default_hooks_dir(vault: Path) -> Path:
    """`.git/hooks` of the repository (its common dir, so worktrees share it)."""
    proc = gitutil.run(vault, "rev-parse", "--git-common-dir")
    common = Path(proc.stdout.decode("utf-8", "replace").strip())
    return (common if common.is_absolute() else vault / common).resolve() / "hooks"


def global_hooks_dir(vault: Path) -> Path | None:
    proc = gitutil.run(
        vault, "config", "--global", "--type=path", "--get", "core.hooksPath", check=False
    )
    value = proc.stdout.decode("utf-8", "replace").strip()
    return _absolute(vault, value) if proc.returncode == 0 and value else None


def _runnable_hooks(folder: Path | None) -> set[str]:
    if folder is None or not folder.is_dir():
        return set()
    found = set()
    for entry in folder.iterdir():
        if entry.name in GIT_HOOK_NAMES and entry.is_file() and os.access(entry, os.X_OK):
            found.add(entry.name)
    return found


def install_git_hooks(vault: Path, brain_py: str, *, write: bool = True) -> GitHooks:
    """Generate brain's hooks for `vault` and point its local core.hooksPath at them. With
    `write` False nothing is written: what would be (`brain install --dry-run`), `kept` when
    the hooks are there as they would be written."""
    ours = hooks_dir(vault)
    current = _config(vault, "--get", "core.hooksPath")
    if current and _is_brain_dir(_absolute(vault, current)):
        action = "updated"
        previous = _config(vault, "--get", PREVIOUS_KEY)
    else:
        action = "installed"
        previous = current or None
        if write:
            _set_config(vault, PREVIOUS_KEY, previous)
    if previous:
        expanded = _config(vault, "--type=path", "--get", PREVIOUS_KEY) or previous
        chains = str(_absolute(vault, expanded))
    else:
        chains = str(default_hooks_dir(vault))
    names = (
        set(BRAIN_HOOKS) | _runnable_hooks(Path(chains)) | _runnable_hooks(global_hooks_dir(vault))
    )
    ordered = tuple(n for n in BRAIN_HOOKS if n in names) + tuple(sorted(names - set(BRAIN_HOOKS)))
    if not write:
        log = post_commit_log(vault, make=False)
        texts = {n: render_hook(n, brain_py=brain_py, previous_dir=chains, log=log) for n in names}
        if (
            action == "updated"
            and current == str(ours)
            and all(_text(ours / n) == text for n, text in texts.items())
        ):
            action = "kept"
        return GitHooks(str(vault), str(ours), ordered, previous, chains, action)
    try:
        ours.mkdir(parents=True, exist_ok=True)
        log = post_commit_log(vault)
        for name in sorted(names):
            text = render_hook(name, brain_py=brain_py, previous_dir=chains, log=log)
            write_atomic(ours / name, text, mode=0o755)
        for stale in ours.iterdir():  # a chained hook that has gone since the last install
            if stale.name not in names and is_brain_file(stale):
                stale.unlink()
        write_atomic(ours / VAULT_MARKER, f"{vault}\n")
    except OSError as exc:
        raise BrainError(
            f"cannot write brain's git hooks to {ours}: {exc.strerror}",
            "make the config folder writable (or set XDG_CONFIG_HOME) and run `brain install` "
            "again",
        ) from exc
    _set_config(vault, "core.hooksPath", str(ours))
    return GitHooks(str(vault), str(ours), ordered, previous, chains, action)


def _text(path: Path) -> str | None:
    try:
        return path.read_text(encoding="utf-8")
    except (OSError, UnicodeDecodeError):
        return None


def _delete_generated(folder: Path) -> tuple[str, ...]:
    if not folder.is_dir():
        return ()
    removed = []
    for entry in sorted(folder.iterdir()):
        if entry.is_file() and is_brain_file(entry):
            entry.unlink()
            removed.append(entry.name)
    with contextlib.suppress(FileNotFoundError):
        (folder / VAULT_MARKER).unlink()
    with contextlib.suppress(OSError):
        folder.rmdir()  # only when empty: anything someone put there stays
    return tuple(removed)


def uninstall_git_hooks(vault: Path, folder: Path | None = None) -> GitHooks:
    """Point `vault` back at the hooks it had before brain and delete brain's generated hooks."""
    ours = folder or hooks_dir(vault)
    previous: str | None = None
    action, message = "absent", None
    if vault.is_dir() and gitutil.is_repo(vault):
        current = _config(vault, "--get", "core.hooksPath")
        previous = _config(vault, "--get", PREVIOUS_KEY)
        if current and _is_brain_dir(_absolute(vault, current)):
            _set_config(vault, "core.hooksPath", previous)
            action = "removed"
        elif current:
            action = "left"
            message = f"core.hooksPath is {current}, not brain's; left as it is"
            previous = None
        _set_config(vault, PREVIOUS_KEY, None)
    removed = _delete_generated(ours)
    if removed and action == "absent":
        action = "removed"
    return GitHooks(str(vault), str(ours), removed, previous, None, action, message)


def installed_vaults() -> list[tuple[Path, Path]]:
    """(vault, hook folder) for every folder brain generated hooks into."""
    root = hooks_root()
    if not root.is_dir():
        return []
    found = []
    for folder in sorted(root.iterdir()):
        try:
            text = (folder / VAULT_MARKER).read_text(encoding="utf-8").strip()
        except OSError:
            continue
        if text:
            found.append((Path(text), folder))
    return found
