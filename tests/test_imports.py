"""The agent's hot path stays light.

`brain find` runs many times a session from agents and hooks, so it parses its own arguments
(from brain.options, the declaration its Typer command is built from: tests/test_options.py) and
never imports Typer, rich or any of the heavy optional libraries.
"""

from __future__ import annotations

import json
import os
import shutil
import subprocess
import sys
from pathlib import Path

import pytest
from conftest import FIXTURE_VAULT, ROOT, brain

V = str(FIXTURE_VAULT)
HEAVY = ("typer", "click", "rich", "numpy", "onnxruntime", "tokenizers", "httpx", "pygit2", "mcp")
HEAVY += ("yaml", "starlette", "uvicorn", "jinja2")  # the last three: `brain desk` only


def imported_modules(
    *args: str, env: dict[str, str] | None = None, input: str | None = None, cli: bool = True
) -> tuple[int, set[str]]:
    """Run `python -X importtime -m brain ARGS` (not a TTY; `input` on stdin) and list every
    module it imported; `cli`: the command ran in it (not in the worker)."""
    proc = subprocess.run(
        [sys.executable, "-X", "importtime", "-m", "brain", *args],
        capture_output=True,
        text=True,
        input=input,
        env={**os.environ, **(env or {})},
        cwd=ROOT,
        timeout=120,
        check=False,
    )
    assert "Traceback" not in proc.stderr
    modules = set()
    for line in proc.stderr.splitlines():
        if line.startswith("import time:") and "|" in line:
            name = line.rsplit("|", 1)[1].strip()
            if name != "package":  # the header row
                modules.add(name)
    assert ("brain.cli" in modules) == cli, proc.stderr[-2000:]
    return proc.returncode, modules


@pytest.mark.parametrize(
    "args",
    [
        ["x"],  # no hit
        ["libgit2", "hooks"],  # hits, terse lines
        ["--json", "pygit2"],
        ["--raw", "--limit", "2", "payments"],
        ["--budget", "100", "--", "--weird"],
        ["--terse", "-n", "1", "libgit2"],
    ],
)
def test_find_imports_nothing_heavy(args: list[str]) -> None:
    code, modules = imported_modules("find", "--vault", V, *args)
    assert code in (0, 1)
    heavy = sorted(m for m in modules if m.split(".")[0] in HEAVY)
    assert heavy == [], f"`brain find` imported {heavy}"


def test_find_masks_its_query_without_loading_the_credential_rules() -> None:
    """The query is echoed masked (`--json`, the person's note), but a query without a word any
    rule looks for never loads brain.secrets' rules; one with a credential does."""
    imported_modules("find", "--vault", V, "x")  # builds the index (which masks the vault)
    code, modules = imported_modules("find", "--vault", V, "--json", "libgit2 hooks")
    assert code == 0
    assert "brain.secrets" not in modules
    code, modules = imported_modules("find", "--vault", V, "--json", "libgit2 password hunter2x")
    assert "brain.secrets" in modules


def test_find_on_a_fresh_and_a_warm_index_imports_nothing_heavy() -> None:
    for _ in range(2):  # the first run builds the index, the second only reads it
        code, modules = imported_modules("find", "--vault", V, "libgit2")
        assert code == 0
        assert sorted(m for m in modules if m.split(".")[0] in HEAVY) == []


def test_find_errors_import_nothing_heavy() -> None:
    code, modules = imported_modules("find", "--vault", "/nonexistent", "--json", "x")
    assert code == 1
    assert sorted(m for m in modules if m.split(".")[0] in HEAVY) == []


@pytest.mark.parametrize("command", ["inbox", "ledger", "log"])
def test_only_brain_desk_loads_the_web_stack(command: str) -> None:
    """Typer commands may load Typer, never Starlette, uvicorn or Jinja2 (`brain desk` does)."""
    code, modules = imported_modules(command, "--vault", V)
    assert code == 0
    assert "typer" in modules  # the Typer path, not the fast one
    web = ("starlette", "uvicorn", "jinja2", "brain.desk")
    assert sorted(m for m in modules if m.startswith(web)) == []


def test_importtime_check_can_fail() -> None:
    """The detector itself: the Typer path does import typer."""
    _, modules = imported_modules("find", "--vault", V, "--help")
    assert "typer" in modules


# --- the fast path ------------------------------------------------------------------------------


def test_sync_fast_path_imports_nothing_heavy(git_vault: Path) -> None:
    code, modules = imported_modules("sync", "status", "--vault", str(git_vault))
    assert code == 0
    assert sorted(m for m in modules if m.split(".")[0] in HEAVY) == []


def test_reindex_fast_path_and_typer_give_the_same_json(
    vault: Path, capsys: pytest.CaptureFixture[str]
) -> None:
    fast = brain("reindex", "--vault", str(vault), "--json")  # stderr is a pipe: fast path
    assert fast.code == 0, fast.err
    from brain.app import run

    assert run(["reindex", "--vault", str(vault), "--json"]) == 0
    slow = json.loads(capsys.readouterr().out)
    assert list(fast.json()) == list(slow)
    assert slow["changed"] == []
    assert slow["full"] is False


def test_fast_path_is_really_taken(tmp_path: Path) -> None:
    """With typer unimportable, a find still works: nothing on its path needs it."""
    blocker = tmp_path / "typer.py"
    blocker.write_text("raise ImportError('typer is blocked in this test')\n", encoding="utf-8")
    env = {"PYTHONPATH": f"{tmp_path}{os.pathsep}{os.environ.get('PYTHONPATH', '')}"}
    run = brain("find", "--vault", V, "--limit=2", "-n", "3", "pygit2", env=env)
    assert run.code == 0, run
    assert run.out.startswith("AI/LEARNINGS.md:7 libgit2 — ")


# --- the thin client (brain/thin.py) -------------------------------------------------------------

# What a find answered by the worker may import beyond `python -c pass`: `-m`'s runpy, the
# client, and builtin modules (the socket, and select when a hook's stdin is read).
# brain.settings: the variables the thin client reads, read there
HELPERS = {"brain", "brain.deadline", "brain.stdin", "brain.wire", "brain.xdg", "brain.settings"}
THIN = {"runpy", "__future__", *HELPERS, "brain.thin", "_socket", "select"}


def _floor() -> set[str]:
    proc = subprocess.run(
        [sys.executable, "-X", "importtime", "-c", "pass"],
        capture_output=True,
        text=True,
        check=True,
    )
    return {line.rsplit("|", 1)[1].strip() for line in proc.stderr.splitlines() if "|" in line}


def _importtime_modules(stderr: str) -> set[str]:
    """The modules `-X importtime` listed in `stderr`."""
    return {
        line.rsplit("|", 1)[1].strip()
        for line in stderr.splitlines()
        if line.startswith("import time:") and "|" in line
    }


def test_a_find_the_worker_answers_imports_only_the_client(
    vault: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    from test_thin import start
    from test_worker import _kill

    monkeypatch.setenv("BRAIN_WORKER", "1")
    pid = start(vault)
    try:
        find = [sys.executable, "-X", "importtime", "-m", "brain", "find", "--vault", str(vault)]
        for args in (["libgit2"], ["--json", "pg", "vacuum"], ["zzqx"]):
            proc = subprocess.run(
                [*find, *args],
                capture_output=True,
                text=True,
                cwd=ROOT,
                check=False,
            )
            assert proc.returncode in (0, 1), proc.stderr[-2000:]
            modules = _importtime_modules(proc.stderr)
            assert "brain.thin" in modules
            assert "brain.cli" not in modules, "the find ran in-process, not in the worker"
            assert sorted(modules - _floor() - THIN) == [], args
    finally:
        _kill(pid)


def test_a_prime_the_worker_answers_imports_only_the_client(
    vault: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    """The hook's prime, watched by its deadline from the first line, imports what a find does:
    the watchdog is a `_thread` thread (threading: 3 ms of functools and collections)."""
    from test_thin import start
    from test_worker import _kill

    monkeypatch.setenv("BRAIN_WORKER", "1")
    pid = start(vault)
    event = json.dumps({"hook_event_name": "UserPromptSubmit", "prompt": "libgit2 hooks"})
    try:
        proc = subprocess.run(
            [sys.executable, "-X", "importtime", "-m", "brain", "prime", "--vault", str(vault)],
            input=event,
            capture_output=True,
            text=True,
            cwd=ROOT,
            check=False,
        )
        assert proc.returncode == 0, proc.stderr[-2000:]
        modules = _importtime_modules(proc.stderr)
        assert "brain.thin" in modules
        assert "brain.cli" not in modules, "the prime ran in-process, not in the worker"
        # brain.errors: the deadline's setting is read through it (0.1 ms, brain's own)
        assert sorted(modules - _floor() - THIN - {"brain.errors"}) == []
    finally:
        _kill(pid)


@pytest.mark.parametrize(
    ("name", "imports"),
    [
        ("__init__", ["__future__", "os", "sys"]),
        ("xdg", ["__future__", "os", "sys"]),
        ("stdin", ["__future__", "os", "time"]),  # time: built into the interpreter
        ("deadline", ["__future__", "_thread", "os", "sys", "time"]),
        ("wire", ["__future__", "os", "sys", "brain", "brain.xdg"]),
        # the thin client: the package's own helpers and the settings (builtins only:
        # tests/test_settings_module)
        ("thin", ["__future__", "os", "sys", "time", *sorted(HELPERS - {"brain"})]),
    ],
)
def test_the_thin_client_imports_only_builtins_at_its_top(name: str, imports: list[str]) -> None:
    """brain.thin and the helpers it takes from the package (brain/__init__.py, xdg, stdin,
    deadline, wire) import only os, sys, time and each other at their top; the rest inside the
    functions that need them."""
    import ast

    tree = ast.parse((ROOT / "brain" / f"{name}.py").read_text(encoding="utf-8"))
    top: list[str] = []
    for node in tree.body:
        if isinstance(node, ast.Import):
            top += [alias.name for alias in node.names]
        elif isinstance(node, ast.ImportFrom):
            top.append(node.module or "")
    assert top == imports


def _imported(python: str, *args: str, until: str = "") -> list[str]:
    """The modules `python -X importtime ARGS` imported, in order, up to `until` included."""
    proc = subprocess.run(
        [python, "-X", "importtime", *args],
        capture_output=True,
        text=True,
        env={k: v for k, v in os.environ.items() if not k.startswith("PYTHON")},
        timeout=120,
        check=False,
    )
    names = []
    for line in proc.stderr.splitlines():
        if line.startswith("import time:") and "|" in line:
            name = line.rsplit("|", 1)[1].strip()
            if name != "package":  # the header row
                names.append(name)
                if name == until:
                    return names
    assert not until, proc.stderr[-2000:]
    return names


@pytest.mark.slow  # pip installs brain into a new venv (a wheel it builds, or editable): 7 s CPU
@pytest.mark.parametrize("editable", [False, True])
def test_the_installed_console_script_imports_only_the_thin_client(
    tmp_path: Path, editable: bool
) -> None:
    """`brain` as pip installs it (from a wheel, and editable): before brain.thin's main runs,
    it imports nothing beyond what `python -c pass` imports and brain.thin (pip's script
    for an entry point imports `re` first). A venv of its own: the test's own has a .pth that
    imports `re` at every start."""
    src = tmp_path / "src"
    for name in ("brain", "hooks", "starter", "bin"):
        shutil.copytree(ROOT / name, src / name, ignore=shutil.ignore_patterns("__pycache__"))
    for name in ("pyproject.toml", "setup.py", "README.md"):
        shutil.copy2(ROOT / name, src / name)
    venv = tmp_path / "venv"
    base = getattr(sys, "_base_executable", sys.executable)
    subprocess.run([base, "-m", "venv", "--without-pip", str(venv)], check=True, timeout=120)
    python = str(venv / "bin" / "python")
    pip = [sys.executable, "-m", "pip", "--disable-pip-version-check", "-q", "--python", python]
    target = ["-e", str(src)] if editable else [str(src)]
    subprocess.run([*pip, "install", "--no-deps", *target], check=True, timeout=600)
    script = venv / "bin" / "brain"
    assert script.read_text(encoding="utf-8").startswith(f"#!{python}")
    floor = set(_imported(python, "-c", "pass"))
    before_main = _imported(python, str(script), "--version", until="brain.thin")
    # __future__: brain's modules say `from __future__ import annotations`
    assert set(before_main) - floor - {"__future__"} == {*HELPERS, "brain.thin"}
