"""`brain doctor`: is everything brain relies on in place, and what in the vault wants attention.

Doctor composes two modules: the health checks (brain.health: each `ok`, `warn` or `fail` with the
command that fixes it; a `fail` makes the exit status 1) and the advisories (brain.advisories:
bullets to carry in a project file, older notes a newer bullet settled, near-duplicates, notes a
newer bullet corrects, and what `brain tend` would act on), which never fail the run.
"""

from __future__ import annotations

from dataclasses import dataclass
from pathlib import Path

from brain import advisories, health
from brain.advisories import (
    Corrected,
    Duplicate,
    FailedClaim,
    Frequent,
    OlderNote,
    SameHandle,
    Superseded,
    cite,
)
from brain.health import Check

SHOWN = 10


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


# --- text ----------------------------------------------------------------------------------------

_MARK = {"ok": "ok  ", "warn": "warn", "fail": "FAIL"}


def text(result: DoctorResult) -> str:
    lines = []
    for c in result.checks:
        line = f"{_MARK.get(c.status, c.status)}  {c.name:<13} {c.detail}"
        if c.fix:
            line += f"\n      {'':<13} fix: {c.fix}"
        lines.append(line)
    if result.frequent:
        lines += [
            "",
            "Bullets lookups keep returning (put them in the project's agent file or a gate):",
        ]
        for f in result.frequent[:SHOWN]:
            asked = ", ".join(repr(q) for q in f.queries)
            lines.append(f"  {f.count:>5}×  {cite(f.path, f.handle)}  {f.path}:{f.line}  ({asked})")
    if result.older_notes:
        from brain.files import printable

        lines += [
            "",
            "Older notes that name what a newer bullet settled (update or cite the bullet):",
        ]
        for n in result.older_notes[:SHOWN]:
            lines.append(
                f"  {printable(n.path)}:{n.line} ({n.date}) says {n.phrase!r} {n.mentions}× — "
                f"{cite(n.bullet.split(':')[0], n.handle)} {n.bullet} ({n.bullet_date})"
            )
    if result.superseded:
        lines += [
            "",
            "Notes older than a bullet that says otherwise (update the note, or mark it as history"
            " by citing the bullet in it, e.g. **handle**):",
        ]
        for note in result.superseded[:SHOWN]:
            said = "paragraph" if note.paragraphs == 1 else "paragraphs"
            newer = "; ".join(f"{b.handle} {b.bullet} ({b.date})" for b in note.bullets)
            lines.append(
                f"  {note.path}:{note.line} ({note.date}) {note.paragraphs} {said} — "
                f"older than {newer}"
            )
    if result.duplicates:
        lines += ["", "Bullets that may say the same thing (merge them, or make one an alias):"]
        for d in result.duplicates[:SHOWN]:
            pair = f"{d.handles[0]} ~ {d.handles[1]}"
            lines.append(f"  {d.score:.2f}  {pair}  ({d.locators[0]}, {d.locators[1]})")
    lines += _tend_text(result)
    failed = sum(c.status == "fail" for c in result.checks)
    lines += ["", f"{failed} broken; run the fix under each" if failed else "All checks pass."]
    return "\n".join(lines)


def _tend_text(result: DoctorResult) -> list[str]:
    lines: list[str] = []
    if result.failed_claims:
        lines += ["", "Bullets whose claims failed here (`brain verify HANDLE`; fix or drop them):"]
        for f in result.failed_claims[:SHOWN]:
            lines.append(
                f"  {f.path}:{f.line} **{f.handle}** ({f.date}): {len(f.failed)} of {f.claims}"
                f" failed: {'; '.join(f.failed)}"
            )
    if result.duplicate_handles:
        lines += [
            "",
            "Handles that name several bullets (`brain tend` proposes keeping the newest):",
        ]
        for g in result.duplicate_handles[:SHOWN]:
            at = ", ".join(f"{b} ({d})" for b, d in zip(g.bullets, g.dates, strict=True))
            lines.append(f"  **{g.handle}**: {at}")
    if result.corrected:
        lines += ["", "Bullets served just before a person corrected the agent (check they hold):"]
        for c in result.corrected[:SHOWN]:
            said = "; ".join(repr(s) for s in c.said)
            lines.append(
                f"  {c.path}:{c.line} **{c.handle}**: {c.corrections}× in "
                f"{c.sessions} session(s): {said}"
            )
    return lines
