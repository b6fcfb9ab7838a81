"""The one place brain runs git.

Hooks export GIT_* variables that would redirect every git call (GIT_DIR, GIT_INDEX_FILE, ...);
they are scrubbed so that a command means the repository it names. The one exception is the
index a commit hook is handed (`hook_index`): staged reads must see what is being committed.
"""

from __future__ import annotations

import functools
import os
import subprocess
from pathlib import Path

from brain.errors import BrainError

# Variables that identify the person committing are kept; the ones that point git elsewhere are not.
_KEEP = {
    "GIT_AUTHOR_NAME",
    "GIT_AUTHOR_EMAIL",
    "GIT_COMMITTER_NAME",
    "GIT_COMMITTER_EMAIL",
    "GIT_CONFIG_GLOBAL",
    "GIT_CONFIG_NOSYSTEM",
    "GIT_AUTHOR_DATE",
    "GIT_COMMITTER_DATE",
}


def no_git_env() -> dict[str, str]:
    return {k: v for k, v in os.environ.items() if not k.startswith("GIT_") or k in _KEEP}


def run(
    repo: Path, *args: str, check: bool = True, index: str | None = None
) -> subprocess.CompletedProcess[bytes]:
    """`git -C repo ARGS` with GIT_* scrubbed; `index` sets GIT_INDEX_FILE (see `hook_index`)."""
    env = no_git_env()
    if index:
        env["GIT_INDEX_FILE"] = index
    try:
        proc = subprocess.run(
            ["git", "-C", str(repo), *args], capture_output=True, env=env, check=False
        )
    except FileNotFoundError as exc:
        raise BrainError("git is not installed", "install git and try again") from exc
    if check and proc.returncode != 0:
        detail = proc.stderr.decode("utf-8", "replace").strip().splitlines()
        raise BrainError(
            f"git {args[0]} failed in {repo}: {detail[-1] if detail else proc.returncode}",
            "check that the vault is a git repository (`git status` there)",
        )
    return proc


def is_repo(path: Path) -> bool:
    return run(path, "rev-parse", "--git-dir", check=False).returncode == 0


def toplevel(path: Path) -> Path | None:
    proc = run(path, "rev-parse", "--show-toplevel", check=False)
    return Path(proc.stdout.decode().strip()) if proc.returncode == 0 else None


def hook_index(repo: Path) -> str | None:
    """The index git handed to a hook running for `repo`, as an absolute path; else None.

    `git commit -a` and `git commit PATHS` stage into a temporary index (`index.lock`,
    `next-index-<pid>.lock`) and export it to the hooks as GIT_INDEX_FILE. Scrubbed, brain would
    read `.git/index` and check content other than what is being committed. The variable is kept
    only when it names a file inside `repo`'s own git directory, so a hook running in one
    repository never redirects brain's reads of another.
    """
    value = os.environ.get("GIT_INDEX_FILE")
    return _hook_index(str(repo), str(Path.cwd() / value)) if value else None


@functools.lru_cache(maxsize=8)
def _hook_index(repo: str, index: str) -> str | None:
    proc = run(Path(repo), "rev-parse", "--absolute-git-dir", check=False)
    if proc.returncode != 0:
        return None
    git_dir = Path(proc.stdout.decode("utf-8", "replace").strip()).resolve()
    return index if Path(index).resolve().is_relative_to(git_dir) else None


def staged_paths(repo: Path) -> list[str]:
    """Files added, copied, modified or renamed in the index (what the commit will hold), relative
    to `repo` and only those inside it: a vault may be a folder of a larger repository."""
    proc = run(
        repo,
        "diff",
        "--cached",
        "--name-only",
        "--relative",
        "-z",
        "--diff-filter=ACMR",
        index=hook_index(repo),
    )
    return [p for p in proc.stdout.decode("utf-8", "replace").split("\0") if p]


def staged_blob(repo: Path, path: str) -> bytes | None:
    """The staged content of `path`, relative to `repo` (`:./path`; `:path` is from the top)."""
    proc = run(repo, "show", f":./{path}", check=False, index=hook_index(repo))
    return proc.stdout if proc.returncode == 0 else None
