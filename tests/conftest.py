"""Shared fixtures: every test runs with its own HOME, XDG dirs and git identity."""

from __future__ import annotations

import json
import os
import shutil
import subprocess
import sys
from dataclasses import dataclass
from pathlib import Path
from typing import Any

import pytest

ROOT = Path(__file__).resolve().parents[1]
FIXTURE_VAULT = ROOT / "testdata" / "vault"

_SCRUB = ("BRAIN_", "CLAUDE", "GIT_", "XDG_", "CODEX_", "GEMINI_CLI", "CURSOR_AGENT")


@pytest.fixture(autouse=True)
def isolated_env(tmp_path_factory: pytest.TempPathFactory, monkeypatch: pytest.MonkeyPatch) -> Path:
    """HOME, XDG dirs, git identity and git config all point into a temp dir."""
    home = tmp_path_factory.mktemp("home")
    for key in list(os.environ):
        if key.startswith(_SCRUB):
            monkeypatch.delenv(key, raising=False)
    monkeypatch.setenv("HOME", str(home))
    monkeypatch.setenv("USERPROFILE", str(home))
    for var, sub in (
        ("XDG_CONFIG_HOME", ".config"),
        ("XDG_STATE_HOME", ".local/state"),
        ("XDG_DATA_HOME", ".local/share"),
        ("XDG_CACHE_HOME", ".cache"),
    ):
        monkeypatch.setenv(var, str(home / sub))
    monkeypatch.setenv("GIT_CONFIG_GLOBAL", str(home / ".gitconfig"))
    monkeypatch.setenv("GIT_CONFIG_NOSYSTEM", "1")
    for who in ("AUTHOR", "COMMITTER"):
        monkeypatch.setenv(f"GIT_{who}_NAME", "Test Person")
        monkeypatch.setenv(f"GIT_{who}_EMAIL", "test@example.invalid")
    monkeypatch.setenv("ORT_DISABLE_TELEMETRY", "1")
    monkeypatch.setenv("BRAIN_NO_UPDATE", "1")
    monkeypatch.setenv("BRAIN_EMBED", "none")  # keyword tests stay fast; hybrid tests opt in
    # no worker unless a test asks (BRAIN_WORKER=1): a `brain find` would otherwise leave one behind
    monkeypatch.setenv("BRAIN_WORKER", "0")
    return home


@pytest.fixture
def vault(tmp_path: Path) -> Path:
    """A private copy of testdata/vault (not a git repository)."""
    dest = tmp_path / "vault"
    shutil.copytree(FIXTURE_VAULT, dest)
    return dest


@pytest.fixture
def twin(vault: Path, tmp_path: Path) -> Path:
    """A second copy of the fixture vault, to do the same thing to two ways and compare."""
    dest = tmp_path / "twin"
    shutil.copytree(vault, dest)
    return dest


def git(repo: Path, *args: str) -> str:
    proc = subprocess.run(
        ["git", "-C", str(repo), *args], capture_output=True, text=True, check=True
    )
    return proc.stdout


@pytest.fixture
def git_vault(vault: Path) -> Path:
    """The fixture vault as a git repository with everything committed."""
    git(vault, "init", "-q", "-b", "main")
    git(vault, "add", "-A")
    git(vault, "commit", "-q", "-m", "fixture")
    return vault


@dataclass
class Run:
    code: int
    out: str
    err: str

    def json(self) -> Any:
        return json.loads(self.out)


def brain(
    *args: str,
    input: str | None = None,
    env: dict[str, str] | None = None,
    cwd: Path | None = None,
    timeout: float = 120,
) -> Run:
    """Run the real `brain` in a fresh process, as an agent or a hook would."""
    proc = subprocess.run(
        [sys.executable, "-m", "brain", *args],
        capture_output=True,
        text=True,
        input=input,
        env={**os.environ, **(env or {})},
        cwd=cwd,
        timeout=timeout,
        check=False,
    )
    return Run(proc.returncode, proc.stdout, proc.stderr)
