"""A build from a checkout says which commit it is (setup.py's build hook), as a release does."""

from __future__ import annotations

import json
import os
import shutil
import subprocess
import sys
import zipfile
from pathlib import Path

import pytest
from conftest import ROOT, git

import brain

pytestmark = pytest.mark.slow  # builds a wheel and an sdist from a clone


def _version(env: dict[str, str], cwd: Path) -> dict[str, str]:
    proc = subprocess.run(
        [sys.executable, "-m", "brain", "version", "--json"],
        capture_output=True,
        text=True,
        env={**os.environ, **env},
        cwd=cwd,
        timeout=60,
        check=True,
    )
    doc: dict[str, str] = json.loads(proc.stdout)
    return doc


def _clean_clone(dest: Path) -> str:
    """This checkout's files, as they are now, committed in a fresh repository: its short id."""
    listed = git(ROOT, "ls-files", "-z", "--cached", "--others", "--exclude-standard")
    for rel in filter(None, listed.split("\0")):
        src = ROOT / rel
        if src.is_file():
            (dest / rel).parent.mkdir(parents=True, exist_ok=True)
            shutil.copy2(src, dest / rel)
    git(dest, "init", "-q")
    git(dest, "add", "-A")
    git(dest, "commit", "-q", "-m", "clone")
    return git(dest, "rev-parse", "--short=12", "HEAD").strip()


def test_a_wheel_built_from_a_clean_clone_knows_its_commit(tmp_path: Path) -> None:
    clone = tmp_path / "clone"
    head = _clean_clone(clone)
    out = tmp_path / "wheels"
    subprocess.run(
        [
            *(sys.executable, "-m", "pip", "wheel", "--no-deps", "-q"),
            *("--disable-pip-version-check", "-w", str(out), str(clone)),
        ],
        check=True,
        timeout=600,
    )
    (wheel,) = out.glob("brain_memory-*.whl")
    site = tmp_path / "site"
    with zipfile.ZipFile(wheel) as zf:
        zf.extractall(site)
        shipped = set(zf.namelist())
    # `brain desk` works offline: its templates and the vendored chart library ship in the wheel
    desk = {"templates/inbox.html", "static/chart.umd.min.js", "static/chart.js-LICENSE.md"}
    assert {f"brain/desk/{name}" for name in desk} <= shipped
    assert git(clone, "status", "--porcelain") == ""  # the build wrote nothing into the checkout
    assert not (clone / "brain" / "_build.py").exists()
    run_in = tmp_path / "elsewhere"
    run_in.mkdir()
    doc = _version({"PYTHONPATH": str(site)}, run_in)
    assert (doc["version"], doc["commit"]) == ("dev", head)


def test_an_editable_install_shows_the_checkout_s_commit(tmp_path: Path) -> None:
    if Path(brain.__file__).resolve().parent != ROOT / "brain" or not (ROOT / ".git").exists():
        pytest.skip("brain is not installed editable from this checkout")
    head = git(ROOT, "rev-parse", "--short=12", "HEAD").strip()
    doc = _version({}, tmp_path)
    assert doc["version"] == "dev"
    assert doc["commit"].removesuffix("-dirty") == head
