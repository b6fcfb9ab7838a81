"""Where things live: the vault, the user's settings and brain's own state.

Resolution order for the vault: `--vault`, then `BRAIN_VAULT`, then the vault `brain install`
recorded. The recorded vault is a one-line file so that the hot path (`brain find`) never imports a
YAML parser; preferences (embedding provider and the like) live in `brain.yaml` beside it and are
read only on demand.
"""

from __future__ import annotations

import contextlib
import hashlib
import os
import re
import sys
from pathlib import Path
from typing import Any

from brain.errors import BrainError
from brain.settings import COLORS, OFF, REVIEW_MODES, VAULT_CONFIG, current

APP = "brain"
CORE_FILES = ("AI/MEMORY.md", "AI/LEARNINGS.md", "AI/TUNINGS.md")
INBOX = "AI/INBOX.md"
SYNONYMS = "AI/synonyms.tsv"
# Written by `brain tend` and searched by nothing: the bullets it dropped, the changes it made.
DROPPED = "AI/DROPPED.md"
TENDED = "AI/TENDED.md"
NOT_SEARCHED = (INBOX, DROPPED, TENDED)
__all__ = ["COLORS", "OFF", "REVIEW_MODES", "VAULT_CONFIG"]  # brain.settings': named here too


def _user_dir(kind: str) -> Path:
    """platformdirs' user folder of `kind` for brain. On Linux it is worked out by the same XDG
    rules (brain.xdg.xdg_dir: the thin client shares it), because importing platformdirs
    (tempfile, shutil, lzma, bz2, random) is a fifth of a cached `brain pack`;
    tests/test_config.py checks that both agree."""
    from brain.xdg import xdg_dir

    found = xdg_dir(kind, current().env)
    if found is not None:
        return Path(found)
    import platformdirs

    find = {
        "config": platformdirs.user_config_dir,
        "state": platformdirs.user_state_dir,
        "data": platformdirs.user_data_dir,
    }[kind]
    return Path(find(APP, appauthor=False))


def config_dir() -> Path:
    return _user_dir("config")


def state_dir(*, make: bool = True) -> Path:
    """brain's state: indexes, the lookup log (queries), recall's transcripts. BRAIN_STATE puts
    it elsewhere (brain.xdg.xdg_dir, which the thin client shares). It is made, or made again,
    readable by its owner only (0700), once per process; with `make` False (what `install
    --dry-run` would write) it is only named."""
    said = current().state
    if said and not _full_path(said):
        raise BrainError(
            f"BRAIN_STATE={said!r} is not a folder's full path",
            "set it to one (BRAIN_STATE=~/brain-state), or unset it for the usual place",
        )
    path = _user_dir("state")
    if make and path not in _PRIVATE:
        _PRIVATE.add(path)
        with contextlib.suppress(OSError):  # a folder brain cannot create fails where it is used
            path.mkdir(parents=True, exist_ok=True, mode=0o700)
            if path.stat().st_mode & 0o077:
                path.chmod(0o700)
    return path


_PRIVATE: set[Path] = set()


def _full_path(said: str) -> bool:
    """Whether `said` names a folder by its full path once `~` is read (as brain.xdg.xdg_dir reads
    it: `~nobody` of a user that does not exist stays as it is, a relative path)."""
    try:
        return Path(said).expanduser().is_absolute()
    except RuntimeError:  # no such user's home
        return False


def private_file(path: Path) -> None:
    """Create `path`, when it is absent, readable by its owner only: SQLite creates a database
    0644 (less the umask), and its -wal and -shm files copy the database's mode."""
    with contextlib.suppress(OSError):
        path.parent.mkdir(parents=True, exist_ok=True)
        os.close(os.open(path, os.O_WRONLY | os.O_CREAT | os.O_EXCL, 0o600))


def data_dir() -> Path:
    return _user_dir("data")


def python_command(module: str, *args: str) -> list[str]:
    """How brain starts a helper process (`python -m MODULE ARGS` in its own interpreter): with
    -P, so that the current folder is not on the import path and a folder named `brain` where
    the user stands cannot shadow brain itself."""
    return [sys.executable, "-P", "-m", module, *args]


def recorded_vault_file() -> Path:
    return config_dir() / "vault"


def recorded_vault() -> Path | None:
    try:
        text = recorded_vault_file().read_text(encoding="utf-8").strip()
    except (FileNotFoundError, NotADirectoryError):
        return None
    except OSError as exc:
        raise BrainError(
            f"cannot read {recorded_vault_file()}: {exc.strerror}",
            "run `brain install PATH` to record the vault again",
        ) from exc
    return Path(text) if text else None


def resolve_vault(option: str | Path | None = None) -> Path:
    """The vault to use, or a BrainError that says how to get one."""
    return which_vault(option)[0]


def which_vault(option: str | Path | None = None) -> tuple[Path, str]:
    """The vault to use and what named it: `--vault`, `BRAIN_VAULT` or `recorded` (by `brain
    install`); a BrainError that says how to get one when there is none or it is no vault."""
    if option:
        origin, said, raw = "--vault", "--vault", Path(option)
    elif current().vault:
        origin, said, raw = "BRAIN_VAULT", "BRAIN_VAULT", Path(current().vault)
    else:
        recorded = recorded_vault()
        if recorded is None:
            raise BrainError(
                "no vault configured",
                "run `brain install` to create one, or set BRAIN_VAULT=/path/to/vault",
            )
        origin, said, raw = "recorded", f"the vault recorded in {recorded_vault_file()}", recorded
    path = current().path(raw)  # relative to the command's folder (the worker's is another)
    if not path.exists():
        raise BrainError(
            f"vault {path} does not exist (from {said})",
            "check the path, or run `brain install PATH` to create a vault there",
        )
    if not path.is_dir():
        raise BrainError(
            f"vault {path} is a file, not a directory (from {said})",
            "point --vault or BRAIN_VAULT at the vault's folder",
        )
    if not (path / "AI").is_dir():
        raise BrainError(
            f"{path} is not a vault: it has no AI/ folder (from {said})",
            "run `brain install` there to add the starter AI/ files",
        )
    return path.resolve(), origin


def index_dir(*, make: bool = True) -> Path:
    """Where every vault's index lives (the state dir is made unless `make` is False)."""
    return state_dir(make=make) / "index"


def index_path(vault: Path, *, make: bool = True) -> Path:
    """One disposable index per vault, named so that a person can tell which is which."""
    digest = hashlib.sha256(str(vault).encode("utf-8", "surrogateescape")).hexdigest()[:12]
    slug = re.sub(r"[^A-Za-z0-9]+", "-", vault.name).strip("-").lower() or "vault"
    return index_dir(make=make) / f"{slug}-{digest}.sqlite"


def usage_log_path() -> Path:
    return state_dir() / "usage.sqlite"


def settings() -> dict[str, Any]:
    """The user's preferences from `brain.yaml`; empty when there is none."""
    return current().user_file(config_dir())


def vault_settings(vault: Path) -> dict[str, str]:
    """The vault's AI/config.yaml (brain.settings reads it)."""
    return current().vault_file(vault)


def review_mode(vault: Path) -> str:
    """`before` (a proposal answers nothing until approved) or `after` (it answers at once,
    marked unreviewed): BRAIN_REVIEW on this machine, else the vault's AI/config.yaml, where
    anything else counts as `before`."""
    return review_override() or vault_review_mode(vault)


def vault_review_mode(vault: Path) -> str:
    """The review mode AI/config.yaml sets for every machine (`before` unless it says `after`)."""
    mode = vault_settings(vault).get("review", "")
    return mode if mode in REVIEW_MODES else "before"


def proposals_mode(vault: Path) -> str:
    """Where proposals wait, as AI/config.yaml says for every clone: `team` (each a branch of the
    shared remote, brain/team.py) or `local` (AI/INBOX.md; anything else counts as local). It
    is independent of the review mode, which keeps its meaning."""
    return "team" if vault_settings(vault).get("proposals", "") == "team" else "local"


def review_override() -> str | None:
    """BRAIN_REVIEW: this machine's review mode over the vault's; None when unset."""
    return current().review
