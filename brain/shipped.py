"""What this installation of brain is and ships: its executable, the ID line that marks what it
generates, and its shipped text files.

Shared by the modules that write outside the vault's Markdown: the vault's git hooks
(brain.githooks), the agents' settings files (brain.agent_hooks) and `brain install` (its PATH
wrapper, the starter AI/ files). Neither hook module imports the other.
"""

from __future__ import annotations

import os
import sys
from pathlib import Path

from brain.errors import BrainError

HOOK_ID = "ID: brain-hook-7d3f09c1b6e2"  # never change: it is how brain knows its own files
STARTER_FILES = ("MEMORY.md", "LEARNINGS.md", "TUNINGS.md", "INBOX.md", "synonyms.tsv")


def is_brain_file(path: Path) -> bool:
    """Whether `path` is a file brain generated (its first lines carry `HOOK_ID`)."""
    try:
        with path.open("rb") as fh:
            head = fh.read(512)
    except OSError:
        return False
    return HOOK_ID.encode() in head


def resource(package: str, folder: str, name: str) -> str:
    """A shipped text file: from the installed package, else from the source checkout."""
    from importlib import resources

    try:
        return resources.files(package).joinpath(name).read_text(encoding="utf-8")
    except (ModuleNotFoundError, FileNotFoundError, NotADirectoryError):
        source = Path(__file__).resolve().parent.parent / folder / name
        try:
            return source.read_text(encoding="utf-8")
        except OSError as exc:
            raise BrainError(
                f"brain's {folder}/{name} is missing from this installation",
                "reinstall brain (pip install --force-reinstall brain-memory)",
            ) from exc


def starter_file(name: str) -> str:
    return resource("brain.starter_data", "starter", name)


def brain_executable() -> Path | None:
    """The `brain` console script of the running installation, resolved past any link."""
    import shutil

    candidates = [Path(sys.executable).parent / "brain"]
    found = shutil.which("brain")
    if found:
        candidates.append(Path(found))
    argv0 = Path(sys.argv[0]) if sys.argv and sys.argv[0] else None
    if argv0 is not None and argv0.name == "brain":
        candidates.append(argv0)
    for candidate in candidates:
        if candidate.is_file() and os.access(candidate, os.X_OK):
            return Path(os.path.realpath(candidate))
    return None
