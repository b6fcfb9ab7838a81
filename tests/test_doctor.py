"""`brain doctor`: health checks with fixes, and the vault advisories."""

from __future__ import annotations

import json
import os
from pathlib import Path

import pytest
from conftest import brain
from test_contract import KEYS

DOCTOR_KEYS = KEYS["`doctor`"]
CHECK_KEYS = KEYS["`doctor` check"]
KNOWN_PAIRS = {
    ("L#go race detector", "T#race tests"),
    ("L#migration locks", "T#migration safety"),
    ("L#pytest tmp_path", "T#temp files in tests"),
    ("L#numeric money", "M#amounts in minor units"),
}


def _checks(doc: dict[str, object]) -> dict[str, dict[str, str]]:
    return {c["name"]: c for c in doc["checks"]}  # type: ignore[attr-defined,index]


def test_json_contract_and_a_vault_without_git(vault: Path) -> None:
    run = brain("doctor", "--vault", str(vault), "--json")
    assert run.code == 1, run
    doc = run.json()
    assert list(doc) == DOCTOR_KEYS
    assert all(list(c) == CHECK_KEYS for c in doc["checks"])
    checks = _checks(doc)
    assert [c["name"] for c in doc["checks"]] == [
        "vault",
        "git",
        "index",
        "model",
        "sqlite",
        "agent-hooks",
    ]
    assert checks["git"]["status"] == "fail"
    assert "brain install --init" in checks["git"]["fix"]
    assert checks["sqlite"]["status"] == "ok"
    assert "FTS5" in checks["sqlite"]["detail"]
    assert doc["ok"] is False
    text = brain("doctor", "--vault", str(vault))
    assert text.code == 1
    assert "fix: brain install --init" in text.out


def test_missing_vault_is_a_failed_check_not_a_crash(tmp_path: Path) -> None:
    run = brain("doctor", "--vault", str(tmp_path / "nope"), "--json")
    assert run.code == 1
    assert _checks(run.json())["vault"]["status"] == "fail"


def test_installed_vault_passes_then_a_vanished_interpreter_fails(
    git_vault: Path, tmp_path: Path
) -> None:
    (Path(os.environ["HOME"]) / ".claude").mkdir()
    assert brain("install", str(git_vault), "--json").code == 0
    doc = brain("doctor", "--vault", str(git_vault), "--json").json()
    checks = _checks(doc)
    assert {k: c["status"] for k, c in checks.items()} == {
        "vault": "ok",
        "git": "ok",
        "hooks": "ok",
        "index": "ok",
        "model": "ok",
        "sqlite": "ok",
        "agent-hooks": "ok",
    }, checks
    assert doc["ok"] is True
    hooks_dir = Path(checks["hooks"]["detail"].split(" ")[2])
    hook = hooks_dir / "post-commit"
    hook.write_text(
        hook.read_text(encoding="utf-8").replace("BRAIN_PY=", f"BRAIN_PY={tmp_path}/gone/python #"),
        encoding="utf-8",
    )
    settings = Path(os.environ["HOME"]) / ".claude" / "settings.json"
    settings.write_text(json.dumps({"hooks": {}}), encoding="utf-8")
    (git_vault / "AI" / "MEMORY.md").write_text("# Memory\n", encoding="utf-8")
    run = brain("doctor", "--vault", str(git_vault), "--json")
    assert run.code == 1
    checks = _checks(run.json())
    assert checks["hooks"]["status"] == "fail"
    assert "no longer exists" in checks["hooks"]["detail"]
    assert checks["hooks"]["fix"] == "brain install"
    assert checks["agent-hooks"]["status"] == "fail"
    assert checks["git"]["status"] == "warn"
    assert checks["index"]["status"] == "warn"
    assert checks["index"]["fix"] == "brain reindex"


def test_older_notes_that_name_a_newer_bullet(vault: Path) -> None:
    doc = brain("doctor", "--vault", str(vault), "--json").json()
    notes = doc["older_notes"]
    assert list(notes[0]) == [
        "path",
        "line",
        "date",
        "mentions",
        "phrase",
        "bullet_locator",
        "handle",
        "bullet_date",
    ]
    first = notes[0]
    assert (first["path"], first["line"], first["handle"]) == (
        "projects/infra/plans/2025-06-02-deploy-strategy.md",
        12,
        "blue green deploys",
    )
    assert first["bullet_date"] == "2026-02-17"
    # a line that cites the bullet does not count
    plan = vault / first["path"]
    text = plan.read_text(encoding="utf-8").replace("blue green deploys", "**blue green deploys**")
    text = text.replace("Blue green deploys", "M#blue green deploys")
    plan.write_text(text, encoding="utf-8")
    again = brain("doctor", "--vault", str(vault), "--json").json()["older_notes"]
    (left,) = [n for n in again if n["path"] == first["path"] and n["handle"] == first["handle"]]
    assert (left["line"], left["mentions"], left["phrase"]) == (21, 1, "blue-green")  # uncited


def test_near_duplicates_by_word_overlap_without_vectors(vault: Path) -> None:
    doc = brain("doctor", "--vault", str(vault), "--json").json()
    pairs = {tuple(d["handles"]) for d in doc["duplicates"]}
    assert pairs >= KNOWN_PAIRS
    assert len(pairs) <= len(KNOWN_PAIRS) + 2
    assert list(doc["duplicates"][0]) == ["handles", "locators", "score", "method"]
    assert {d["method"] for d in doc["duplicates"]} == {"jaccard"}


@pytest.mark.slow
def test_near_duplicates_by_cosine_with_vectors(vault: Path) -> None:
    env = {"BRAIN_EMBED": "onnx", "BRAIN_WORKER": "0"}
    assert brain("reindex", "--vault", str(vault), env=env).code == 0
    doc = brain("doctor", "--vault", str(vault), "--json", env=env).json()
    assert _checks(doc)["model"]["status"] == "ok"
    pairs = {tuple(d["handles"]) for d in doc["duplicates"]}
    assert {d["method"] for d in doc["duplicates"]} == {"cosine"}
    assert pairs >= KNOWN_PAIRS
    assert len(pairs) <= len(KNOWN_PAIRS) + 1


def test_bullets_lookups_keep_returning(vault: Path) -> None:
    for _ in range(5):
        assert brain("find", "--vault", str(vault), "libgit2 hooks").code == 0
    doc = brain("doctor", "--vault", str(vault), "--json").json()
    assert doc["frequent"], doc["frequent"]
    top = doc["frequent"][0]
    assert list(top) == ["handle", "path", "line", "count", "queries"]
    assert top["count"] == 5
    assert top["queries"] == ["libgit2 hooks"]


@pytest.mark.parametrize(
    ("agent", "file", "text", "fix"),
    [
        (
            "gemini",
            ".gemini/settings.json",
            '{"theme": "dark", "hooksConfig": {"enabled": false}}\n',
            'set "hooksConfig": {"enabled": true} in ',
        ),
        ("codex", ".codex/config.toml", "[features]\nhooks = false\n", "remove `hooks = false` "),
    ],
)
def test_agent_hooks_warn_when_the_agent_turns_every_hook_off(
    vault: Path, agent: str, file: str, text: str, fix: str
) -> None:
    """brain's three hooks registered, but the agent's own setting runs none: `hooks status`
    noted it, and doctor said ok."""
    path = Path(os.environ["HOME"]) / file
    path.parent.mkdir(parents=True)
    path.write_text(text, encoding="utf-8")
    assert brain("hooks", "on", "--harness", agent).code == 0
    checks = _checks(brain("doctor", "--vault", str(vault), "--json").json())
    hooks = checks["agent-hooks"]
    assert hooks["status"] == "warn", hooks
    assert "are off in" in hooks["detail"]
    assert "brain's hooks never run" in hooks["detail"]
    assert hooks["fix"].startswith(fix), hooks


@pytest.mark.slow
def test_a_new_starter_vault_has_no_vector_to_lack(tmp_path: Path) -> None:
    """install makes the starter vault and a keyword index of it, which has no unit: doctor
    right after said the index had no vectors for the model, fix `brain reindex`."""
    env = {"BRAIN_EMBED": "onnx", "BRAIN_WORKER": "0"}
    vault = tmp_path / "Brain"
    assert brain("install", str(vault), env=env).code == 0
    doc = brain("doctor", "--vault", str(vault), "--json", env=env).json()
    model = _checks(doc)["model"]
    assert (model["status"], model["fix"]) == ("ok", None), model
    # a unit without its vector is still said
    memory = vault / "AI" / "MEMORY.md"
    memory.write_text(
        memory.read_text(encoding="utf-8") + "- **kiln** — the kiln is fired on Fridays — me"
        " — 2026-01-02\n",
        encoding="utf-8",
    )
    assert brain("reindex", "--vault", str(vault), env={"BRAIN_EMBED": "none"}).code == 0
    model = _checks(brain("doctor", "--vault", str(vault), "--json", env=env).json())["model"]
    assert (model["status"], model["fix"]) == ("warn", "brain reindex"), model


def test_the_last_line_says_a_warning_is_there(git_vault: Path) -> None:
    """doctor ended "All checks pass." under a warning, as if there were nothing to do."""
    (Path(os.environ["HOME"]) / ".claude").mkdir()
    assert brain("install", str(git_vault)).code == 0
    clean = brain("doctor", "--vault", str(git_vault))
    assert clean.code == 0, clean
    assert clean.out.rstrip().endswith("\nAll checks pass."), clean.out
    (git_vault / "notes" / "new.md").write_text("# New\n\nA note not committed.\n", "utf-8")
    text = brain("doctor", "--vault", str(git_vault))
    assert text.code == 0  # a warning fails nothing
    n = sum(line.startswith("warn ") for line in text.out.splitlines())
    assert n >= 1, text.out  # git: the note is not committed
    said = f"No check fails; {n} check{'s' if n > 1 else ''} warn{'' if n > 1 else 's'} (above)."
    assert text.out.rstrip().endswith("\n" + said), repr(text.out[-200:])
