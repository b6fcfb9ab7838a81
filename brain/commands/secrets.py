"""`brain secrets`: credentials in the vault. The scan of its files (or of what is staged) is
brain/secrets_scan.py's `scan`, below the commands since the sync runs it too; here the two scans
of what git keeps: `--outgoing` (the commits not sent yet) and `--history` (every version of
every file in every commit)."""

from __future__ import annotations

from dataclasses import dataclass
from pathlib import Path
from typing import Any

from brain import gitutil, secrets
from brain import vault as vaultmod
from brain.errors import BrainError

# --- what is not sent yet ------------------------------------------------------------------------


def outgoing(vault: Path) -> secrets.CommitScan:
    """The commits of the checked-out branch that no remote-tracking branch holds (every commit
    when the vault has no remote), scanned as sync scans what it sends (`scan_commits`)."""
    if not gitutil.is_repo(vault):
        raise BrainError(
            f"{vault} is not a git repository, so it has no commits",
            "run `brain secrets` without --outgoing",
        )
    proc = gitutil.run(vault, "for-each-ref", "--format=%(refname)", "refs/remotes")
    remotes = [ref for ref in proc.stdout.decode("utf-8", "replace").split("\n") if ref]
    return secrets.scan_commits(vault, "HEAD", remotes)


# --- the history ---------------------------------------------------------------------------------

# A blob this large is no note: read it whole would cost its size in memory, so it is named as
# not scanned instead (never taken as clean).
MAX_HISTORY_BLOB = 8 << 20


@dataclass(frozen=True)
class HistoryFinding:
    commit: str  # the short hash of the commit that introduced the credential to `path`
    date: str  # that commit's author date (YYYY-MM-DD, in the author's time zone), as git log
    path: str
    line: int | None  # in that commit's version of the file
    rule: str
    masked: str
    inside: str | None = None  # as `brain.secrets.Finding.inside`: a zip member, `gzip`, ...


@dataclass(frozen=True)
class HistoryResult:
    ok: bool  # no finding, and no blob left unread
    commit_count: int  # commits walked, from every ref
    blob_count: int  # distinct blobs read
    findings: tuple[HistoryFinding, ...]
    skipped: tuple[vaultmod.Problem, ...] = ()  # blobs not read (or a part of one), and why


def history(vault: Path) -> HistoryResult:
    """Every blob of every commit reachable from any ref (branches, tags, remotes, the stash),
    scanned once each, oldest commit first, so each credential is reported with the commit that
    brought it into its file, even when a later commit deleted it. One blob is in memory at a
    time, read as `brain secrets` reads a file (`brain.secrets.scan_data`)."""
    repo = gitutil.repository(vault)
    if repo is None:
        raise BrainError(
            f"{vault} is not a git repository, so it has no history",
            "run `brain secrets` without --history",
        )
    seen: set[bytes] = set()
    reported: set[tuple[str, bool, str | None, str]] = set()
    findings: list[HistoryFinding] = []
    skipped: list[vaultmod.Problem] = []
    commits = blobs = 0
    for commit in gitutil.revisions(repo, gitutil.every_tip(repo), by_time=True):
        commits += 1
        short = commit.id[:7]
        for path, oid in commit.changes:
            found = secrets.name_keyed(path)
            if oid not in seen:
                seen.add(oid)
                size = gitutil.blob_size(repo, oid)
                if size is not None:
                    keyed, problem, read = _history_blob(repo, oid, size, path, short)
                    blobs += read
                    found += keyed
                    skipped += [problem] if problem else []
            for finding, key in found:
                where = (finding.path, finding.line is None, finding.inside, key)
                if where in reported:
                    continue  # the same credential in a later version of the file
                reported.add(where)
                findings.append(
                    HistoryFinding(
                        short,
                        commit.date,
                        secrets.redact(finding.path),
                        finding.line,
                        finding.rule,
                        finding.masked,
                        finding.inside,
                    )
                )
    return HistoryResult(
        not findings and not skipped, commits, blobs, tuple(findings), tuple(skipped)
    )


def _history_blob(
    repo: Any, oid: bytes, size: int, path: str, short: str
) -> tuple[list[tuple[secrets.Finding, str]], vaultmod.Problem | None, bool]:
    """The credentials in one blob of the history, what of it was not scanned, and whether it
    was read at all."""
    if size > MAX_HISTORY_BLOB:
        why = f"{size / 1e6:.0f} MB in commit {short}: too large to read; not scanned"
        return [], vaultmod.Problem(secrets.redact(path), None, why), False
    read = secrets.scan_data(gitutil.blob_data(repo, oid), path)
    if not read.unscanned:
        return list(read.findings), None, True
    why = f"in commit {short}: {read.unscanned}"
    return list(read.findings), vaultmod.Problem(secrets.redact(path), None, why), True
