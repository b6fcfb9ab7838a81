"""The fast path's deliberate twins of library code (README: "Deliberate twins"): the thin
client answers before brain's modules load, so it carries its own small copies, and these tests
hold each copy equal to what it stands in for. (The XDG folders against platformdirs are held
by tests/test_config.py, the option parser against Typer by tests/test_options.py.)"""

from __future__ import annotations

from pathlib import Path

import pytest

from brain import config, thin, wire


@pytest.mark.parametrize(
    ("data", "digest"),
    [  # FNV-1a 64's published test vectors (www.isthe.com/chongo/tech/comp/fnv)
        (b"", "cbf29ce484222325"),
        (b"a", "af63dc4c8601ec8c"),
        (b"foobar", "85944171f73967e8"),
    ],
)
def test_the_worker_names_hash_is_fnv_1a(data: bytes, digest: str) -> None:
    """The worker's name is hashed without hashlib (not loaded on the fast path): FNV-1a 64."""
    assert wire._fnv(data) == digest


def test_the_thin_client_finds_the_vault_brain_resolves(
    tmp_path: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    """thin.guess_vault names the worker of the vault brain.config.resolve_vault would use:
    `--vault`, then BRAIN_VAULT, then the recorded vault, `~` and links read alike."""
    home = Path.home()
    real = tmp_path / "real"
    (real / "AI").mkdir(parents=True)
    link = home / "vaults"
    link.symlink_to(tmp_path)
    monkeypatch.delenv("BRAIN_VAULT", raising=False)
    assert thin.guess_vault(["find", "x"]) is None  # nothing recorded: brain says how to get one
    recorded = config.recorded_vault_file()
    recorded.parent.mkdir(parents=True, exist_ok=True)
    recorded.write_text("~/vaults/real\n", encoding="utf-8")
    cases: list[tuple[list[str], str | None]] = [
        (["find", "x"], None),
        (["find", "--vault", "~/vaults/real", "x"], "~/vaults/real"),
        (["find", f"--vault={real}", "x"], str(real)),
    ]
    for argv, option in cases:
        assert thin.guess_vault(argv) == str(config.resolve_vault(option))
    monkeypatch.setenv("BRAIN_VAULT", str(link / "real"))
    assert thin.guess_vault(["find", "x"]) == str(config.resolve_vault(None))
    assert thin.guess_vault(["find", "x"]) == str(real.resolve())
