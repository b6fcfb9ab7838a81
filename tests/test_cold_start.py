"""The cold first find: the worker it starts waits for its answer."""

from __future__ import annotations

from pathlib import Path

import pytest

from brain import index, run, worker_client


def test_a_cold_find_starts_the_worker_once_it_has_answered(
    vault: Path, monkeypatch: pytest.MonkeyPatch, capsys: pytest.CaptureFixture[str]
) -> None:
    """Started at once, the worker loaded its model beside the find's own on the same cores."""
    index.sync(vault)  # keywords only: the find answers at once and leaves embedding to the worker
    monkeypatch.setenv("BRAIN_EMBED", "onnx")
    monkeypatch.setenv("BRAIN_WORKER", "1")
    written_before: list[tuple[str, str]] = []

    def spawn(where: Path, base: Path | None = None) -> bool:
        written_before.append(capsys.readouterr())
        return True

    monkeypatch.setattr(worker_client, "spawn", spawn)
    assert run.run_find(["libgit2", "hooks"], vault=str(vault)) == 0
    assert len(written_before) == 1
    out, err = written_before[0]
    assert out.startswith("AI/LEARNINGS.md:7 libgit2")
    assert err == "brain: keyword results for now: the vault is being embedded in the background\n"


def test_a_worker_that_failed_lately_is_not_started_after_the_find_either(
    vault: Path, monkeypatch: pytest.MonkeyPatch, capsys: pytest.CaptureFixture[str]
) -> None:
    index.sync(vault)
    monkeypatch.setenv("BRAIN_EMBED", "onnx")
    monkeypatch.setenv("BRAIN_WORKER", "1")
    base = worker_client.base_of(vault)
    base.parent.mkdir(parents=True, exist_ok=True, mode=0o700)
    worker_client.with_suffix(base, ".failed").write_text("brain: no model\n", encoding="utf-8")
    assert run.run_find(["libgit2", "hooks"], vault=str(vault)) == 0
    assert not worker_client.with_suffix(base, ".log").exists()  # nothing was spawned
    assert capsys.readouterr().err == (
        "brain: keyword results for now: run `brain reindex` to embed the vault\n"
    )
