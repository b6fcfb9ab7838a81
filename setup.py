"""Build hook: a wheel or sdist built from a git checkout records the commit it was built from.

Everything else about the package is in pyproject.toml. `brain version` reads `brain/_build.py`:
tools/build_release.py writes it (with the release tag) into the copy it builds; any other build
(`pip install .`, `pip wheel .`, `python -m build`) gets one here, with the tag `dev`, in the build
folder only, so the checkout never changes. An editable install writes none: `brain version` asks
the checkout itself, whose commit moves as you work.
"""

from __future__ import annotations

import os
import subprocess
from pathlib import Path

from setuptools import setup
from setuptools.command.build_py import build_py
from setuptools.command.sdist import sdist

HERE = Path(__file__).resolve().parent
BUILD_FILE = Path("brain") / "_build.py"


def _git(*args: str) -> str:
    try:
        proc = subprocess.run(
            ["git", "-C", str(HERE), *args], capture_output=True, text=True, check=False
        )
    except OSError:  # no git: no commit to record
        return ""
    return proc.stdout.strip() if proc.returncode == 0 else ""


def _commit() -> str:
    """HEAD's short id, `-dirty` when tracked files differ from it; "" outside a checkout."""
    if not (HERE / ".git").exists():
        return ""  # an unpacked sdist inside some other repository is not that repository
    head = _git("rev-parse", "--short=12", "HEAD")
    if not head:
        return ""
    return head + ("-dirty" if _git("status", "--porcelain", "--untracked-files=no") else "")


def _write(folder: Path) -> None:
    """brain/_build.py under `folder`, unless the source has its own (a release build's)."""
    if (HERE / BUILD_FILE).exists():
        return
    target = folder / BUILD_FILE
    commit = _commit()
    if not commit:
        target.unlink(missing_ok=True)  # a stale one from an earlier build must not lie
        return
    target.parent.mkdir(parents=True, exist_ok=True)
    target.write_text(
        f'"""Written by setup.py at build time."""\n\nTAG = "dev"\nCOMMIT = {commit!r}\n',
        encoding="utf-8",
    )


class BuildPy(build_py):
    def run(self) -> None:
        super().run()
        if not self.editable_mode:
            _write(Path(self.build_lib))


class Sdist(sdist):
    def make_release_tree(self, base_dir: str, files: list[str]) -> None:
        super().make_release_tree(base_dir, files)
        _write(Path(base_dir))  # a wheel built later from the sdist keeps the commit


def _scripts() -> dict[str, object]:
    """The `brain` command. On POSIX bin/brain, a script whose `#!python` pip points at the
    interpreter: it imports brain.thin and nothing else, where pip's script for an entry point
    imports `re` first (tests/test_imports.py checks). Windows needs the entry point's brain.exe,
    and so does a wheel that may be installed anywhere (BRAIN_UNIVERSAL_WHEEL=1:
    tools/build_release.py's)."""
    if os.name == "nt" or os.environ.get("BRAIN_UNIVERSAL_WHEEL") == "1":
        return {"entry_points": {"console_scripts": ["brain = brain.thin:main"]}}
    return {"scripts": ["bin/brain"]}


setup(cmdclass={"build_py": BuildPy, "sdist": Sdist}, **_scripts())
