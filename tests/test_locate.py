"""`brain locate HANDLE`: path:line and the line as written."""

from __future__ import annotations

from pathlib import Path

from conftest import brain
from test_contract import KEYS

LOCATE_KEYS = KEYS["`locate`"]
MATCH_KEYS = KEYS["`locate` match"]


def test_handle_alias_case_and_diacritics(vault: Path) -> None:
    v = str(vault)
    run = brain("locate", "--vault", v, "Blue", "Green", "DEPLOYS")
    assert run.code == 0, run
    lines = (vault / "AI" / "MEMORY.md").read_text(encoding="utf-8").splitlines()
    loc, _, raw = run.out.rstrip("\n").partition(": ")
    path, line = loc.split(":")
    assert path == "AI/MEMORY.md"
    assert lines[int(line) - 1] == raw
    assert brain("locate", "--vault", v, "blue-green").out == run.out  # an alias
    doc = brain("locate", "--vault", v, "--json", "odeme durumu").json()
    assert list(doc) == LOCATE_KEYS
    assert list(doc["matches"][0]) == MATCH_KEYS
    assert doc["matches"][0]["handle"] == "ödeme durumu casing"  # the handle before the alias
    assert doc["count"] == 2
    assert brain("locate", "--vault", v, "M#ödeme durumu", "--json").json()["count"] == 1


def test_not_found_is_exit_1_with_a_hint(vault: Path) -> None:
    # part of a handle is no handle (`blue green` alone is the alias `blue-green`: brain.vocab)
    run = brain("locate", "--vault", str(vault), "green deploys")
    assert run.code == 1
    assert run.out == ""
    assert run.err.count("\n") == 1
    assert "brain find 'green deploys'" in run.err
    as_json = brain("locate", "--vault", str(vault), "--json", "nothing here")
    assert as_json.code == 1  # no match: the empty list, as find and recall answer
    assert as_json.json() == {"query": "nothing here", "count": 0, "matches": []}


def test_no_handle_prints_the_vault_folder_as_every_command_finds_it(
    vault: Path, tmp_path: Path
) -> None:
    """`brain locate` with nothing to find prints the vault's folder (where locators start) and,
    under --json, what named it; a wrong vault is the usual one-line error."""
    run = brain("locate", "--vault", str(vault))
    assert (run.code, run.out, run.err) == (0, f"{vault.resolve()}\n", "")
    by_env = brain("locate", "--json", env={"BRAIN_VAULT": str(vault)})
    assert by_env.json() == {"vault": str(vault.resolve()), "origin": "BRAIN_VAULT"}
    assert brain("install", str(vault), "--init").code == 0
    recorded = brain("locate", "--json", cwd=tmp_path)
    assert recorded.json() == {"vault": str(vault.resolve()), "origin": "recorded"}
    gone = brain("locate", "--vault", str(tmp_path / "nope"))
    assert gone.code == 1
    assert gone.err.count("\n") == 1
    assert "does not exist" in gone.err
