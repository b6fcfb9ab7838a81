"""brain.settings (issue 29, items 6 and 9): the environment, brain.yaml and AI/config.yaml
resolved in one place, numbers parsed one way, one YAML grammar for both files."""

from __future__ import annotations

import ast
import json
import os
import threading
from pathlib import Path

import pytest
from conftest import ROOT, brain
from test_imports import imported_modules
from test_thin import start
from test_worker import _kill, stop_workers

from brain import config, release, settings, worker_client
from brain.errors import BrainError


def test_a_find_by_keywords_that_brain_yaml_asks_for_starts_no_worker(vault: Path) -> None:
    """`embed: none` in brain.yaml is keyword-only as BRAIN_EMBED=none is: the find neither
    imports the worker's client (its socket) nor holds a worker start for later; run.py looked
    at the variable alone."""
    (config.config_dir() / "brain.yaml").parent.mkdir(parents=True, exist_ok=True)
    (config.config_dir() / "brain.yaml").write_text("embed: none\n", encoding="utf-8")
    env = {"BRAIN_EMBED": "", "BRAIN_WORKER": "0"}
    code, modules = imported_modules("find", "--vault", str(vault), "libgit2", env=env)
    assert code in (0, 1)
    assert "brain.worker_client" not in modules
    code, modules = imported_modules(
        "find", "--vault", str(vault), "libgit2", env={"BRAIN_EMBED": "none"}
    )
    assert "brain.worker_client" not in modules


def test_a_bad_worker_idle_is_said_in_its_log_and_the_worker_serves(
    vault: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    """BRAIN_WORKER_IDLE=soon stopped the worker at its start (a bare float()): every find then
    paid for the model in-process. Now the worker serves with the default and says why."""
    monkeypatch.setenv("BRAIN_WORKER", "1")
    monkeypatch.setenv("BRAIN_WORKER_IDLE", "soon")
    pid = start(vault)
    try:
        log = worker_client.with_suffix(worker_client.base_of(vault), ".log")
        said = log.read_text(encoding="utf-8")
        assert "BRAIN_WORKER_IDLE='soon' is not a positive number" in said
        assert "600 is used" in said
        run = brain("find", "--vault", str(vault), "libgit2", "--terse")
        assert run.code == 0, run
    finally:
        _kill(pid)
        stop_workers(worker_client.base_of(vault))


@pytest.mark.parametrize("said", ["inf", "-1", "0", "nan", "30s"])
def test_a_release_timeout_that_is_no_positive_number_is_an_error_naming_it(
    said: str, monkeypatch: pytest.MonkeyPatch
) -> None:
    """release.py parsed BRAIN_UPDATE_TIMEOUT its own way: `inf` waited forever, `-1` and `0`
    became 0.1 s and `30s` 30 s, each without a word."""
    monkeypatch.setenv("BRAIN_UPDATE_TIMEOUT", said)
    with pytest.raises(BrainError, match=f"BRAIN_UPDATE_TIMEOUT={said!r} is not a positive"):
        release.timeout()
    monkeypatch.setenv("BRAIN_UPDATE_TIMEOUT", "2.5")
    assert release.timeout() == 2.5
    monkeypatch.delenv("BRAIN_UPDATE_TIMEOUT")
    assert release.timeout() == 30.0


def test_a_bad_prime_number_is_logged_and_the_prompt_served(vault: Path) -> None:
    """Prime never fails its prompt: a bad number is a line in its log, and the default serves
    (env_number dropped it without a word). The hook's prompt gets what it would have got."""
    assert brain("reindex", "--vault", str(vault)).code == 0  # prime never builds it in time
    event = json.dumps({"prompt": "libgit2 hooks", "session_id": "s-bad", "cwd": str(vault)})
    run = brain("prime", "--vault", str(vault), input=event, env={"BRAIN_PRIME_BUDGET": "lots"})
    assert run.code == 0, run
    log = (config.state_dir() / "logs" / "prime.log").read_text(encoding="utf-8")
    assert "BRAIN_PRIME_BUDGET='lots' is not a positive number" in log
    again = json.dumps({"prompt": "libgit2 hooks", "session_id": "s-good", "cwd": str(vault)})
    assert run.out == brain("prime", "--vault", str(vault), input=again).out
    assert "libgit2" in run.out
    # The deadline's line goes the same way (run_prime); its gate keeps the default.
    said = settings.Settings({"BRAIN_PRIME_DEADLINE": "lots"}, "/").prime_seconds(1.0)
    assert said[0] == 1.0
    assert said[1].startswith("BRAIN_PRIME_DEADLINE='lots' is not a positive number")


def test_ai_config_yaml_is_read_as_yaml(vault: Path) -> None:
    """The vault's settings file went through a line splitter for review and aliases and
    through pyyaml for lint: `{review: after}` was `before` to one and `after` to the other,
    and a file that is no YAML was read as if it were."""
    cfg = vault / "AI" / "config.yaml"
    cfg.write_text("{review: after, lint: standard}\n", encoding="utf-8")
    shown = brain("review", "--vault", str(vault), "--json")
    assert shown.code == 0, shown
    assert shown.json()["mode"] == "after"
    cfg.write_text("# the team's\nreview: [after\n", encoding="utf-8")
    run = brain("review", "--vault", str(vault))
    assert run.code == 1, run
    assert f"{cfg}:3 is not valid YAML" in run.err or f"{cfg}:2 is not valid YAML" in run.err


def test_settings_are_one_threads_and_the_process_keeps_its_own(tmp_path: Path) -> None:
    """What `using` installs is seen by that thread alone: the worker's other requests read the
    process's environment and folder, which never change."""
    mine = settings.Settings({"BRAIN_STATE": str(tmp_path)}, str(tmp_path))
    seen: list[str] = []
    started, done = threading.Event(), threading.Event()

    def other() -> None:
        started.wait()
        seen.append(settings.current().state)
        done.set()

    thread = threading.Thread(target=other)
    thread.start()
    with settings.using(mine):
        assert settings.current() is mine
        started.set()
        done.wait(10)
    thread.join()
    assert seen == [os.environ.get("BRAIN_STATE", "").strip()]
    assert settings.current() is not mine
    with pytest.raises(AttributeError):
        mine.cwd = "/"  # type: ignore[misc]


def test_a_number_is_positive_and_finite_or_an_error_naming_it() -> None:
    said = settings.Settings({"N": " 2.5 ", "BAD": "fast", "ZERO": "0", "EMPTY": ""}, "/")
    assert said.number("N", 1.0) == 2.5
    assert said.number("UNSET", 1.0) == 1.0
    assert said.number("EMPTY", 1.0) == 1.0
    for name in ("BAD", "ZERO"):
        with pytest.raises(BrainError, match=f"{name}="):
            said.number(name, 1.0)
    why = "BAD='fast' is not a positive number (set it to one (e.g. BAD=3), or unset it for 3)"
    assert said.number_or_default("BAD", 3.0) == (3.0, f"{why}; 3 is used")


def test_every_brain_variable_is_read_in_brain_settings() -> None:
    """No module but brain.settings reads the environment for a BRAIN_* name: os.environ or
    os.getenv with a literal BRAIN_ name, anywhere in the package."""
    readers = set()
    for path in sorted((ROOT / "brain").rglob("*.py")):
        if path.name == "settings.py":
            continue
        tree = ast.parse(path.read_text(encoding="utf-8"))
        for node in ast.walk(tree):
            if isinstance(node, ast.Call) and node.args:
                first = node.args[0]
                literal = isinstance(first, ast.Constant) and str(first.value).startswith("BRAIN_")
                if literal and "environ" in ast.unparse(node.func) + ast.unparse(node):
                    readers.add(path.relative_to(ROOT).as_posix())
            if isinstance(node, ast.Subscript) and "environ" in ast.unparse(node.value):
                key = node.slice
                if isinstance(key, ast.Constant) and str(key.value).startswith("BRAIN_"):
                    readers.add(path.relative_to(ROOT).as_posix())
    assert readers == set()


def test_brain_settings_imports_only_what_the_thin_client_may() -> None:
    tree = ast.parse((ROOT / "brain" / "settings.py").read_text(encoding="utf-8"))
    top = [
        alias.name if isinstance(node, ast.Import) else node.module or ""
        for node in tree.body
        if isinstance(node, ast.Import | ast.ImportFrom)
        for alias in node.names
    ]
    assert top == ["__future__", "_thread", "os"]
