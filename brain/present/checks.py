"""The presenters of the checks of what the vault holds: `brain lint` (malformed bullets) and
`brain secrets` (credentials, in the files, every version in history, or the commits not sent
yet)."""

from __future__ import annotations

from collections.abc import Callable, Sequence
from dataclasses import dataclass
from typing import TYPE_CHECKING, Any

from brain.present import Answer, json_text
from brain.text import noun, plural, printable

if TYPE_CHECKING:
    from brain.commands.secrets import HistoryResult
    from brain.lint import LintResult
    from brain.secrets import CommitScan
    from brain.secrets_scan import SecretsResult
    from brain.vault import Problem


@dataclass(frozen=True)
class LintDoc:
    """`brain lint --json` (docs/json.md): the verdict first."""

    ok: bool
    strict: bool
    files: tuple[str, ...]
    bullet_count: int
    problems: tuple[Problem, ...]


def lint(result: LintResult, *, as_json: bool = False) -> Answer:
    """Every problem on its own line (exit 1), or one line that all is good."""
    code = 0 if result.ok else 1
    if as_json:
        doc = LintDoc(result.ok, result.strict, result.files, result.bullet_count, result.problems)
        return Answer(json_text(doc), code=code)
    if result.problems:
        found = plural(len(result.problems), "problem")
        return Answer(
            "\n".join(str(p) for p in result.problems),
            f"{found}; fix {noun(len(result.problems), 'it', 'them')} and run `brain lint` again",
            code,
        )
    bullets = plural(result.bullet_count, "bullet")
    strictly = " (strict)" if result.strict else ""
    return Answer(f"{bullets} in {plural(len(result.files), 'file')}: all good{strictly}.")


def secrets(result: SecretsResult, *, as_json: bool = False) -> Answer:
    """`brain secrets`: a line per finding on stdout; on stderr the files not read (or not whole)
    and the count."""
    from dataclasses import replace

    from brain.secrets import redact

    code = 0 if result.ok else 1
    # a finding's path is the file's, for a caller that acts on it (sync leaves it uncommitted):
    # a name that holds a credential is printed masked
    masked = tuple(replace(f, path=redact(f.path)) for f in result.findings)
    result = replace(result, findings=masked)
    if as_json:
        return Answer(json_text(result), code=code)
    also = " (and gitleaks)" if result.gitleaks else ""
    text = finding_lines(result.findings, lambda f: "")
    notes = [str(problem) for problem in (*result.skipped, *result.not_scanned)]
    unread = f"; {plural(len(result.skipped), 'file')} not read (above)" if result.skipped else ""
    if result.not_scanned:
        unread += (
            f"; {plural(len(result.not_scanned), 'file')} not scanned whole (above): check "
            "what could not be read yourself, or keep it out of the vault"
        )
    if result.findings:
        found = plural(len(result.findings), "possible secret")
        files = plural(len({f.path for f in result.findings}), "file")
        notes.append(
            f"{found} in {files}{also}; remove {noun(len(result.findings), 'it', 'them')} and "
            "keep credentials in a password "
            f"manager{unread}"
        )
    else:
        notes.append(f"no secrets in {plural(len(result.files), 'file')}{also}{unread}")
    return Answer(text, "\n".join(notes), code)


def finding_lines(findings: Sequence[Any], lead: Callable[[Any], str]) -> str:
    """A line per finding of `brain secrets` (`lead` starts it: a commit), at its place:
    `notes.zip[a.md]:3`, `x.md:2`, `x.md` (in its name)."""
    lines = []
    for f in findings:
        part = f"[{printable(f.inside)}]" if f.inside else ""
        line = "" if f.line is None else f":{f.line}"
        lines.append(f"{lead(f)}{printable(f.path)}{part}{line}: {f.rule} ({f.masked})")
    return "\n".join(lines)


def versions_read(commits: int, blobs: int, which: str = "") -> str:
    return f"{plural(commits, 'commit')}{which}, {plural(blobs, 'distinct file version')} read"


def secrets_history(result: HistoryResult, *, as_json: bool = False) -> Answer:
    """`brain secrets --history`: a line per credential with the commit that added it."""
    code = 0 if result.ok else 1
    if as_json:
        return Answer(json_text(result), code=code)
    text = finding_lines(result.findings, lambda f: f"{f.commit} {f.date} ")
    notes = [str(skipped) for skipped in result.skipped]
    read = versions_read(result.commit_count, result.blob_count)
    if result.findings:
        found = plural(len(result.findings), "possible secret")
        notes.append(
            f"{found} in the history ({read}); each stays in every clone even once deleted: "
            "revoke it, then rewrite the history (git filter-repo) if the vault is shared"
        )
    else:
        notes.append(f"no secrets in the history ({read})")
    return Answer(text, "\n".join(notes), code)


def secrets_outgoing(result: CommitScan, *, as_json: bool = False) -> Answer:
    """`brain secrets --outgoing`: a line per credential with the commit that brought it; on
    stderr what was not read whole, the count and how to take it out."""
    code = 0 if result.ok else 1
    if as_json:
        return Answer(json_text(result), code=code)
    text = finding_lines(result.findings, lambda f: f"{f.commit[:12]} ")
    notes = [f"{printable(u.path)}: in commit {u.commit[:12]}: {u.why}" for u in result.unscanned]
    read = versions_read(result.commit_count, result.blob_count, " not sent yet")
    unread = (
        f"; {plural(len(result.unscanned), 'file')} not scanned whole (above)"
        if result.unscanned
        else ""
    )
    if result.findings:
        notes.append(f"{plural(len(result.findings), 'possible secret')} in {read}{unread}")
        notes.append(result.hint or "")
    else:
        notes.append(f"no secrets in {read}{unread}")
    return Answer(text, "\n".join(notes), code)
