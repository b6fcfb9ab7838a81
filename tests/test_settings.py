"""brain's environment settings (brain.config): BRAIN_REVIEW, BRAIN_STATE; each read where it acts,
each refusing a value it cannot use in one line that names it."""

from __future__ import annotations

from pathlib import Path

import pytest
from conftest import FIXTURE_VAULT, brain

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


# --- colour: --color, BRAIN_COLOR, NO_COLOR, an agent -------------------------------------------

SGR = "\x1b["  # what rich writes for colour and bold


def _listing(*args: str, **env: str) -> tuple[int, str]:
    """`brain ARGS find libgit2 hooks` with stdout a terminal, as a person runs it."""
    from test_find import run_in_pty

    return run_in_pty(*args, "find", "--vault", str(FIXTURE_VAULT), "libgit2 hooks", env=env)


def test_a_person_at_a_terminal_gets_colour_unless_told_otherwise() -> None:
    """auto: colour at a terminal; NO_COLOR (no-color.org) turns it off, and `--color always`
    or BRAIN_COLOR=always turns it back on; `--color` wins over BRAIN_COLOR; never is plain."""
    for args, env, coloured in [
        ((), {}, True),
        ((), {"NO_COLOR": "1"}, False),
        ((), {"NO_COLOR": ""}, True),  # set but empty: no-color.org counts only a value
        (("--color", "always"), {"NO_COLOR": "1"}, True),
        ((), {"NO_COLOR": "1", "BRAIN_COLOR": "always"}, True),
        (("--color=never",), {}, False),
        ((), {"BRAIN_COLOR": "never"}, False),
        (("--color", "auto"), {"BRAIN_COLOR": "never"}, True),
        (("--color", "always"), {"TERM": "dumb"}, True),
        ((), {"TERM": "dumb"}, False),
    ]:
        code, out = _listing(*args, **env)
        assert code == 0, (args, env, out)
        assert "for libgit2 hooks" in out, (args, env, out)  # the person's listing
        assert (SGR in out) is coloured, (args, env, out)


@pytest.mark.parametrize(
    "env",
    [{"AI_AGENT": "claude-code_2.1_agent"}, {"CODEX_THREAD_ID": "0199a2b3"}],
    ids=["ai-agent", "codex-thread"],
)
def test_an_agent_at_a_terminal_gets_plain_lines_and_is_logged_as_one(env: dict[str, str]) -> None:
    """Codex runs commands in a terminal of its own and sets CODEX_THREAD_ID (CODEX_SANDBOX only
    under a sandbox); AI_AGENT is the name-neutral variable: plain terse lines, no colour."""
    code, out = _listing(**env)
    assert code == 0, out
    assert SGR not in out
    assert out.startswith("AI/LEARNINGS.md:7 libgit2 — ")
    from brain.config import usage_log_path
    from brain.usage import connect, events

    conn = connect(usage_log_path())
    try:
        callers = {e.caller for e in events(conn)}
    finally:
        conn.close()
    assert callers == {"codex" if "CODEX_THREAD_ID" in env else "agent"}


def test_a_colour_that_is_no_choice_is_one_line() -> None:
    flag = brain("--color", "blue", "find", "--vault", str(FIXTURE_VAULT), "libgit2")
    assert (flag.code, flag.out) == (2, "")
    assert flag.err.startswith("brain: --color takes auto, always or never, not 'blue'")
    assert flag.err.count("\n") == 1
    env = brain("locate", "--vault", str(FIXTURE_VAULT), env={"BRAIN_COLOR": "blue"})
    assert env.code == 0  # a command that colours nothing does not read it
    listing = _listing(BRAIN_COLOR="blue")
    assert listing[0] == 1
    assert "BRAIN_COLOR='blue' is not auto, always or never" in listing[1]


def test_color_before_any_command_is_taken_off_for_every_path(vault: Path) -> None:
    """The fast path (find), Typer's commands (locate) and a worker's command alike run as if
    `--color` were not there; `--help` lists it."""
    plain = brain("find", "--vault", str(vault), "libgit2 hooks")
    assert (
        brain("--color", "never", "find", "--vault", str(vault), "libgit2 hooks").out == plain.out
    )
    assert brain("--color=always", "locate", "--vault", str(vault)).out == f"{vault.resolve()}\n"
    assert "--color" in brain("--help").out
