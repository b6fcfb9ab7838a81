"""`brain version`: the release tag (or `dev`) and the commit it was built from."""

from __future__ import annotations

import platform
from dataclasses import dataclass
from pathlib import Path

from brain import __version__


@dataclass(frozen=True)
class VersionResult:
    version: str  # the release tag, or "dev" for a local build
    commit: str | None  # short commit, "-dirty" when built from an unclean tree; None: unknown
    package: str
    python: str


def version() -> VersionResult:
    commit: str | None
    try:
        from brain import _build  # type: ignore[attr-defined]  # written by the release build

        tag, commit = str(_build.TAG), str(_build.COMMIT)
    except ImportError:
        tag, commit = "dev", _checkout_commit()
    return VersionResult(tag, commit, __version__, platform.python_version())


def _checkout_commit() -> str | None:
    """For a local build: the commit of the checkout brain runs from, if it runs from one."""
    from brain import gitutil

    root = Path(__file__).resolve().parents[2]
    if not (root / ".git").exists():
        return None
    head = gitutil.run(root, "rev-parse", "--short=12", "HEAD", check=False)
    if head.returncode != 0:
        return None
    dirty = gitutil.run(root, "status", "--porcelain", "--untracked-files=no", check=False)
    return head.stdout.decode().strip() + ("-dirty" if dirty.stdout.strip() else "")
