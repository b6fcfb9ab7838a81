"""`brain verify`'s verdicts and its count: a claim this machine cannot check neither speaks for a
bullet nor against it, and the count says how many bullets it could check, apart from the ones it
only read."""

from __future__ import annotations

from pathlib import Path

from conftest import brain, today
from test_tend import OLD, add

from brain.commands import verify as verifymod
from brain.commands.verify import FAILED, PASSED, UNKNOWN, Claim


def _claims(*states: str) -> list[Claim]:
    return [Claim("path", f"/p{i}", s, "") for i, s in enumerate(states)]


def test_a_claim_that_cannot_be_checked_changes_no_verdict() -> None:
    assert verifymod.verdict(_claims(PASSED, UNKNOWN)) == "passed"  # was "mixed"
    assert verifymod.verdict(_claims(FAILED, UNKNOWN)) == "failed"  # was "mixed"
    assert verifymod.verdict(_claims(PASSED, FAILED, UNKNOWN)) == "mixed"
    assert verifymod.verdict(_claims(UNKNOWN, UNKNOWN)) == "unknown"
    assert verifymod.verdict(_claims(PASSED)) == "passed"
    assert verifymod.verdict([]) == "none"


def test_the_count_is_of_bullets_whose_claims_this_machine_can_check(
    vault: Path, tmp_path: Path
) -> None:
    here = tmp_path / "deploy.sh"
    here.write_text("echo\n", encoding="utf-8")
    add(
        vault,
        f"- **both laptops** — the script is {here} here and /Users/bob/deploy.sh on the Mac"
        f" — me — {OLD}",
        f"- **bob only** — the build lives in /Users/bob/work/build.sh — me — {OLD}",
        f"- **mac only** — the cache is /Users/bob/Library/Caches/x — me — {OLD}",
    )
    v = str(vault)
    run = brain("verify", "both laptops", "bob only", "mac only", "--vault", v)
    assert run.code == 0, run.err
    assert (
        f"AI/MEMORY.md:{_line(vault, 'both laptops')} **both laptops** ({OLD}): passed "
        "(1 of 2 claims cannot be checked here)"
    ) in run.out
    assert f"**bob only** ({OLD}): unknown\n" in run.out
    assert run.out.rstrip().endswith(
        "1 of 3 bullets makes a claim this machine can check: 1 passed, 0 with a failed claim; "
        "2 more make only claims it cannot check"
    ), run.out
    # --apply dates the bullet whose every claim this machine can check passed
    assert brain("verify", "both laptops", "--apply", "--vault", v).code == 0
    memory = (vault / "AI" / "MEMORY.md").read_text(encoding="utf-8")
    assert f"/Users/bob/deploy.sh on the Mac — me — {today()}" in memory
    assert f"/Users/bob/work/build.sh — me — {OLD}" in memory  # unknown: not dated


def _line(vault: Path, handle: str) -> int:
    lines = (vault / "AI" / "MEMORY.md").read_text(encoding="utf-8").split("\n")
    return next(n for n, line in enumerate(lines, 1) if line.startswith(f"- **{handle}**"))
