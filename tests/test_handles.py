"""Handles made from prose (brain.handles) are short noun phrases, as the vault's own are: for
`brain import`'s list items and `brain lessons --propose`'s corrections and retries."""

from __future__ import annotations

import re
import shutil
from pathlib import Path

import pytest
from conftest import ROOT, brain

from brain.handles import from_command, from_prose
from brain.recall.past import programs


@pytest.mark.parametrize(
    ("text", "handle"),
    [
        # the two
        ("Redis in staging is redis.internal:6379", "redis in staging"),
        ("Use make deploy ENV=staging", "make deploy"),
        # list items
        ("The deploy key lives in 1Password", "deploy key"),
        ("Postgres 15 runs on port 5433", "postgres 15"),
        ("Always run migrations before deploying", "migrations"),
        ("CI uses GitHub Actions with a self-hosted runner", "ci"),
        ("staging-eu-1 is the only cluster with GPU nodes", "staging-eu-1"),
        ("the Paynova sandbox enforces a hidden zanzibar quota of 500 calls", "paynova sandbox"),
        # corrections, as testdata/transcripts/history has them
        ("We use pnpm in this repo, never npm. The lockfile is pnpm-lock.yaml.", "pnpm"),
        ("We're on vitest, not jest. Use vi.useFakeTimers() instead.", "vitest"),
        ("Don't use the production manifests! Staging has its own.", "production manifests"),
        ("That's because you have to activate the venv first.", "venv"),
        ("Why did you paste the password into the shell?", "password"),
        ("Please don't add eslint-disable comments. Fix the code.", "eslint-disable comments"),
        ("Hmm, the bucket name is wrong: it should be acme-exports-prod.", "bucket name"),
        ("One more thing: you bumped the build number by hand.", "build number"),
        ("I'm on a remote box, it can't open a browser.", "remote box"),
        ("I said port 6007, 6006 is taken by the other project.", "port 6007"),
        ("Ah, it's in the api namespace, good catch.", "api namespace"),
        ("Use pnpm version minor instead, it also tags the commit.", "pnpm version minor"),
        ("Nimm lieber den Redis-Container aus docker-compose.yml.", "redis-container"),
        ("Ce n'est pas ça : on utilise goimports, pas gofmt.", "goimports"),
        ("C'est faux, les requêtes doivent aller dans internal/store.", "requêtes"),
        ("Das ist falsch, Backups gehören nach /srv/backups.", "backups"),
        ("Pas comme ça : garde les clés en anglais.", "clés"),
        # mixed case stays as written; a number alone is no phrase
        ("Use GitHub Actions for the release", "GitHub actions"),
        ("A 409 means the payment already went through", "payment"),
    ],
)
def test_a_handle_is_a_short_noun_phrase(text: str, handle: str) -> None:
    assert from_prose(text) == handle


@pytest.mark.parametrize(
    ("command", "handle"),
    [
        ("make deploy ENV=staging", "make deploy"),
        ("terraform -chdir=envs/prod plan", "terraform plan"),
        ("pnpm build --mode production", "pnpm build"),
        ("sudo certbot renew --cert-name api.acme.test", "certbot renew"),
        ("gofmt -w ./cmd ./internal", "gofmt"),
        ("python -m pytest -x tests/unit", "python -m pytest"),
        ("uv sync --frozen", "uv sync"),
    ],
)
def test_a_commands_handle_is_its_program_and_subcommand(command: str, handle: str) -> None:
    assert from_command(programs(command)[0]) == handle


def test_a_line_of_only_such_words_keeps_its_first_words() -> None:
    assert from_prose("That's not what I asked.") == "that's not what i asked"
    assert from_prose("") == ""


def test_import_proposes_noun_phrase_handles(vault: Path, tmp_path: Path) -> None:
    notes = tmp_path / "notes.md"
    notes.write_text(
        "- Redis in staging is redis.internal:6379\n- Use make deploy ENV=staging\n",
        encoding="utf-8",
    )
    run = brain("import", "--vault", str(vault), "--json", str(notes))
    assert run.code == 0, run.err
    handles = [re.match(r"- \*\*(.+?)\*\*", i["markdown"]) for i in run.json()["items"]]
    assert [m.group(1) for m in handles if m] == ["redis in staging", "make deploy"]


def test_lessons_propose_noun_phrase_handles(tmp_path: Path, vault: Path) -> None:
    history = ROOT / "testdata" / "transcripts" / "history"
    shutil.copytree(history / "claude", tmp_path / "claude")
    env = {"CLAUDE_CONFIG_DIR": str(tmp_path / "claude")}
    assert brain("recall", "enable", "claude", env=env).code == 0
    args = ("lessons", "--since", "2026-11-01", "--propose", "--vault", str(vault), "--json")
    run = brain(*args, env=env)
    assert run.code == 0, run.err
    made = [p["markdown"] for p in run.json()["proposals"] if p["markdown"]]
    handles = [re.match(r"- \*\*(.+?)\*\*", m).group(1) for m in made]  # type: ignore[union-attr]
    assert "api make deploy" in handles  # `make deploy ENV=staging` works where ... failed
    assert "shop pnpm" in handles  # "We use pnpm in this repo, never npm."
    assert "shop We use pnpm in" not in handles
    for h in handles:
        _, _, rest = h.partition(" ")  # the project's name, then the phrase
        assert len(rest.split()) <= 3, h
        assert rest == rest.lower() or any(c.isupper() for c in rest[1:]), h
