"""`brain secrets [--staged] [PATHS]`: credentials in the vault's files, before git keeps them.

Every file of the vault is scanned (`.git` skipped), or the named files and folders, or with
`--staged` the content the next commit will hold (read from the git index, which inside a commit
hook is the index git handed the hook). A file is read as `brain.secrets.scan_data` reads bytes:
text, a binary file's runs of text, what a compressed file, a zip's members or a PDF's streams
hold; what it could not read is named in `not_scanned`. A name that is not UTF-8 is no reason to
skip a file. The rules are brain's own (`brain.secrets`); when a `gitleaks` binary is on PATH it
runs too on the text files, and its findings are merged, one per path and line.
"""

from __future__ import annotations

import os
from collections.abc import Iterable
from dataclasses import dataclass
from pathlib import Path
from typing import Any

from brain import gitutil, secrets
from brain import vault as vaultmod
from brain.errors import BrainError
from brain.text import has_surrogates


@dataclass(frozen=True)
class SecretsResult:
    ok: bool  # no finding, nothing skipped or not scanned: what was not read is never clean
    files: tuple[str, ...]  # vault-relative paths scanned
    findings: tuple[secrets.Finding, ...]
    gitleaks: bool  # gitleaks ran and its findings are merged in
    skipped: tuple[vaultmod.Problem, ...] = ()  # not read, and why (a link out, unreadable)
    # read, but a part could not be scanned, and why (an encrypted zip member, corrupt
    # compressed data, past the size cap): never taken as clean either
    not_scanned: tuple[vaultmod.Problem, ...] = ()


def _scanned(rel: str, is_dir: bool) -> bool:
    return rel.rsplit("/", 1)[-1] != ".git"


def _walk(vault: Path, start: str = "") -> vaultmod.Walk:
    return vaultmod.walk(vault, _scanned, start, any_name=True)


def _scope(vault: Path, paths: Iterable[str]) -> vaultmod.Walk:
    """Vault-relative '/'-paths for the named files and folders (relative to cwd or the vault)."""
    out = vaultmod.Walk()
    for given in paths:
        path = Path(given).expanduser()
        candidates = [path] if path.is_absolute() else [Path.cwd() / path, vault / path]
        target = next((c for c in candidates if c.exists() or c.is_symlink()), None)
        if target is None:
            raise BrainError(
                f"{given} does not exist", "name files or folders inside the vault, or none"
            )
        # the folder is resolved (the working directory may be reached through a link), the name
        # is not: a named link out of the vault is skipped as the walk skips it
        absolute = Path(os.path.normpath(target.absolute()))
        named = absolute if absolute == vault else absolute.parent.resolve() / absolute.name
        if not named.is_relative_to(vault):
            raise BrainError(
                f"{given} is not inside the vault {vault}",
                "name files or folders inside the vault, or none to scan it all",
            )
        rel = named.relative_to(vault).as_posix()
        why = vaultmod.link_problem(named, vault) if named != vault else ""
        if why:
            out.skipped.append(vaultmod.Problem(rel, None, why))
        elif named.is_dir():
            found = _walk(vault, "" if rel == "." else rel)
            out.files += found.files
            out.skipped += found.skipped
        elif named.is_file():
            out.files.append(rel)
        else:  # a pipe would block the read until something writes to it; the walk skips these
            why = "not a regular file (a pipe, a socket or a device); skipped"
            out.skipped.append(vaultmod.Problem(rel, None, why))
    out.files = sorted(set(out.files))
    return out


def _wanted(rel: str, prefixes: list[str]) -> bool:
    return any(rel == p or rel.startswith(p.rstrip("/") + "/") or p == "" for p in prefixes)


def _prefixes(vault: Path, paths: Iterable[str]) -> list[str]:
    out = []
    for given in paths:
        path = Path(given).expanduser()
        absolute = path if path.is_absolute() else Path.cwd() / path
        resolved = absolute.resolve()
        if not resolved.is_relative_to(vault):
            resolved = (vault / path).resolve()
        if not resolved.is_relative_to(vault):
            raise BrainError(
                f"{given} is not inside the vault {vault}",
                "name files or folders inside the vault, or none to scan everything staged",
            )
        rel = resolved.relative_to(vault).as_posix()
        out.append("" if rel == "." else rel)
    return out


def scan(vault: Path, paths: list[str] | None = None, *, staged: bool = False) -> SecretsResult:
    """Scan the vault (or `paths`, or what is staged) for credentials."""
    contents: dict[str, bytes] = {}
    skipped: list[vaultmod.Problem] = []
    if staged:
        if not gitutil.is_repo(vault):
            raise BrainError(
                f"{vault} is not a git repository, so nothing is staged",
                "run `brain secrets` without --staged",
            )
        prefixes = _prefixes(vault, paths) if paths else [""]
        for rel, oid in gitutil.staged_files(vault):
            if _wanted(rel, prefixes):
                data = gitutil.blob(vault, oid)
                if data is None:  # never taken as clean: the commit would hold it unread
                    why = "git cannot read what is staged for it; not scanned"
                    skipped.append(vaultmod.Problem(rel, None, why))
                else:
                    contents[rel] = data
    else:
        walked = _scope(vault, paths) if paths else _walk(vault)
        skipped += walked.skipped
        for rel in walked.files:
            try:
                contents[rel] = (vault / rel).read_bytes()
            except FileNotFoundError:
                continue  # deleted since the walk
            except OSError as exc:
                why = f"cannot read it ({exc.strerror}); not scanned"
                skipped.append(vaultmod.Problem(rel, None, why))
    findings: list[secrets.Finding] = []
    not_scanned: list[vaultmod.Problem] = []
    for rel, data in contents.items():
        read = secrets.scan_data(data, rel)
        findings += secrets.scan_name(rel) + [finding for finding, _ in read.findings]
        if read.unscanned:
            not_scanned.append(vaultmod.Problem(secrets.redact(rel), None, read.unscanned))
    extra = _gitleaks(vault, _texts(contents), staged=staged)
    if extra:
        seen = {(f.path, f.line) for f in findings}
        for finding in extra:
            if (finding.path, finding.line) not in seen:
                seen.add((finding.path, finding.line))
                findings.append(finding)
    # in the order they are printed: by the path as shown (masked), the name's finding first
    findings.sort(key=lambda f: (secrets.redact(f.path), f.inside or "", f.line or 0, f.rule))
    skipped.sort(key=lambda p: p.path)
    return SecretsResult(
        not findings and not skipped and not not_scanned,
        tuple(sorted(secrets.redact(rel) for rel in contents)),
        tuple(findings),
        extra is not None,
        tuple(skipped),
        tuple(not_scanned),
    )


def _texts(contents: dict[str, bytes]) -> dict[str, str]:
    """The text files gitleaks is also given: not binary (brain reads those itself), and named in
    UTF-8, which the path in its JSON report can spell."""
    texts: dict[str, str] = {}
    for rel, data in contents.items():
        if b"\0" not in data[: secrets.BINARY_SNIFF] and not has_surrogates(rel):
            texts[rel] = data.decode("utf-8", errors="replace")
    return texts


def _gitleaks(
    vault: Path, contents: dict[str, str], *, staged: bool
) -> list[secrets.Finding] | None:
    """gitleaks' findings for the same files, or None when it is not installed (or failed): the
    files on disk, or what is staged (on no disk) as text."""
    if staged:
        return secrets.run_gitleaks(contents, vault / ".gitleaks.toml")
    return secrets.gitleaks_findings([vault / rel for rel in contents], vault)


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
    import datetime as dt

    import pygit2
    from pygit2.enums import DeltaStatus, SortMode

    try:
        repo = pygit2.Repository(str(vault))
    except pygit2.GitError:
        raise BrainError(
            f"{vault} is not a git repository, so it has no history",
            "run `brain secrets` without --history",
        ) from None
    walker = repo.walk(None, SortMode.TOPOLOGICAL | SortMode.TIME | SortMode.REVERSE)
    tips = 0
    for ref in repo.references.iterator():
        try:
            walker.push(ref.peel(pygit2.Commit).id)
            tips += 1
        except (pygit2.GitError, ValueError, TypeError):
            continue  # a ref to a tree or a blob, or a broken one: no commits there
    if not repo.head_is_unborn and repo.head_is_detached:
        walker.push(repo.head.target)
        tips += 1
    seen: set[bytes] = set()
    reported: set[tuple[str, bool, str | None, str]] = set()
    findings: list[HistoryFinding] = []
    skipped: list[vaultmod.Problem] = []
    commits = blobs = 0
    for commit in walker if tips else ():
        commits += 1
        diff = (
            commit.parents[0].tree.diff_to_tree(commit.tree)
            if commit.parents
            else commit.tree.diff_to_tree(swap=True)
        )
        author = commit.author  # the date `git log` shows: when the change was written
        when = dt.timezone(dt.timedelta(minutes=author.offset))
        date = dt.datetime.fromtimestamp(author.time, when).date().isoformat()
        short = str(commit.id)[:7]
        for delta in diff.deltas:
            new = delta.new_file
            if delta.status == DeltaStatus.DELETED or new.mode == pygit2.enums.FileMode.COMMIT:
                continue
            path = os.fsdecode(new.raw_path)  # a name that is not UTF-8 keeps its bytes
            found = secrets.name_keyed(path)
            if new.id.raw not in seen:
                seen.add(new.id.raw)
                blob = repo[new.id]
                if isinstance(blob, pygit2.Blob):
                    keyed, problem, read = _history_blob(blob, path, short)
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
                        date,
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
    blob: Any, path: str, short: str
) -> tuple[list[tuple[secrets.Finding, str]], vaultmod.Problem | None, bool]:
    """The credentials in one blob of the history, what of it was not scanned, and whether it
    was read at all."""
    if blob.size > MAX_HISTORY_BLOB:
        why = f"{blob.size / 1e6:.0f} MB in commit {short}: too large to read; not scanned"
        return [], vaultmod.Problem(secrets.redact(path), None, why), False
    read = secrets.scan_data(blob.data, path)
    if not read.unscanned:
        return list(read.findings), None, True
    why = f"in commit {short}: {read.unscanned}"
    return list(read.findings), vaultmod.Problem(secrets.redact(path), None, why), True
