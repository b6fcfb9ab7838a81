"""`brain doctor`: is everything brain relies on in place, and what in the vault wants attention.

Doctor composes two modules: the health checks (brain.health: each `ok`, `warn` or `fail` with the
command that fixes it; a `fail` makes the exit status 1) and the advisories
(brain.commands.advisories: bullets to carry in a project file, older notes a newer bullet settled,
near-duplicates, notes a newer bullet corrects, and what `brain tend` would act on), which never
fail the run.
"""

from __future__ import annotations

from dataclasses import dataclass
from pathlib import Path

from brain import health
from brain.commands import advisories
from brain.commands.advisories import (
    Corrected,
    Duplicate,
    FailedClaim,
    Frequent,
    OlderNote,
    SameHandle,
    Superseded,
)
from brain.health import Check


@dataclass(frozen=True)
class DoctorResult:
    ok: bool
    vault: str
    checks: tuple[Check, ...]
    frequent: tuple[Frequent, ...]
    older_notes: tuple[OlderNote, ...]
    duplicates: tuple[Duplicate, ...]
    superseded: tuple[Superseded, ...]
    failed_claims: tuple[FailedClaim, ...] = ()
    duplicate_handles: tuple[SameHandle, ...] = ()
    corrected: tuple[Corrected, ...] = ()


def doctor(vault_option: str | None = None, *, log: Path | None = None) -> DoctorResult:
    vault, checks = health.checks(vault_option)
    advice = advisories.advise(vault, log) if vault is not None else advisories.Advice()
    ok = all(c.status != "fail" for c in checks)
    return DoctorResult(
        ok,
        str(vault or ""),
        tuple(checks),
        advice.frequent,
        advice.older_notes,
        advice.duplicates,
        advice.superseded,
        advice.failed_claims,
        advice.duplicate_handles,
        advice.corrected,
    )
