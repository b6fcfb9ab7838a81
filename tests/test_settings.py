"""brain's environment settings (brain.config): BRAIN_REVIEW, BRAIN_STATE; each read where it acts,
each refusing a value it cannot use in one line that names it."""

from __future__ import annotations

from pathlib import Path

from conftest import brain

from brain import config


def _zanzibar(vault: Path, **env: str) -> int:
    """How many finds answer from the inbox's one zanzibar proposal."""
    run = brain("find", "--vault", str(vault), "--json", "zanzibar quota", env=env)
    assert run.code in (0, 1), run
    return sum(h["unreviewed"] for h in run.json()["hits"])


def test_brain_review_overrides_the_vaults_mode_on_this_machine(vault: Path) -> None:
    """BRAIN_REVIEW=after serves proposals (marked unreviewed) though AI/config.yaml says
    nothing, with no file changed since the index was built; unset, the vault's mode is back."""
    assert _zanzibar(vault) == 0
    assert _zanzibar(vault, BRAIN_REVIEW="after") == 1
    assert _zanzibar(vault) == 0  # the index follows the variable both ways
    (vault / "AI" / "config.yaml").write_text("review: after\n", encoding="utf-8")
    assert _zanzibar(vault) == 1
    assert _zanzibar(vault, BRAIN_REVIEW="Before") == 0


def test_brain_review_is_named_by_brain_review_and_the_file_still_set(vault: Path) -> None:
    v = str(vault)
    shown = brain("review", "--vault", v, "--json", env={"BRAIN_REVIEW": "after"}).json()
    assert (shown["mode"], shown["set_by"], shown["mode_changed"]) == (
        "after",
        "BRAIN_REVIEW",
        False,
    )
    assert shown["unreviewed_count"] == 3
    assert not (vault / "AI" / "config.yaml").exists()
    run = brain("review", "after", "--vault", v, env={"BRAIN_REVIEW": "before"})
    assert run.code == 0, run
    assert run.out == (
        "Review mode is `before` on this machine (BRAIN_REVIEW): a proposal answers nothing "
        "until a person approves it; AI/config.yaml changed for the others: commit it.\n"
    )
    assert config.vault_review_mode(vault) == "after"
    plain = brain("review", "--vault", v, "--json").json()
    assert (plain["mode"], plain["set_by"]) == ("after", "AI/config.yaml")


def test_a_brain_review_that_is_no_mode_is_one_line_naming_it(vault: Path) -> None:
    for args in (("find", "zanzibar"), ("review",)):
        run = brain(*args, "--vault", str(vault), env={"BRAIN_REVIEW": "later"})
        assert run.code == 1, (args, run)
        assert run.out == ""
        assert run.err.count("\n") == 1
        assert "BRAIN_REVIEW='later' is not a review mode" in run.err
        assert "BRAIN_REVIEW=before" in run.err


def test_brain_state_moves_brains_state(vault: Path, tmp_path: Path, isolated_env: Path) -> None:
    """BRAIN_STATE is the state folder itself: the index, the usage log, the logs go there, and
    the usual place stays empty; `~` is the home folder."""
    usual = isolated_env / ".local" / "state" / "brain"
    own = tmp_path / "state"
    assert brain("find", "--vault", str(vault), "libgit2", env={"BRAIN_STATE": str(own)}).code == 0
    assert list((own / "index").glob("*.sqlite"))
    assert (own / "usage.sqlite").is_file()
    assert not usual.exists()
    assert (own.stat().st_mode & 0o777) == 0o700
    home = brain("find", "--vault", str(vault), "libgit2", env={"BRAIN_STATE": "~/elsewhere"})
    assert home.code == 0, home
    assert (isolated_env / "elsewhere" / "usage.sqlite").is_file()
    assert not usual.exists()


def test_a_relative_brain_state_is_one_line_naming_it(vault: Path) -> None:
    run = brain("find", "--vault", str(vault), "libgit2", env={"BRAIN_STATE": "state"})
    assert run.code == 1
    assert run.out == ""
    assert run.err.count("\n") == 1
    assert "BRAIN_STATE='state' is not a folder's full path" in run.err
