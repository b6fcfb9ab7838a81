"""The vault's files scanned for credentials, before git keeps them: the scan `brain secrets
[--staged] [PATHS]` runs, and the sync's write-down (brain/gitsync.py) before it commits.

Every file of the vault is scanned (`.git` skipped), or the named files and folders, or with
`--staged` the content the next commit will hold (read from the git index, which inside a commit
hook is the index git handed the hook). A file is read as `brain.secrets.scan_data` reads bytes:
text, a binary file's runs of text, what a compressed file, a zip's members or a PDF's streams
hold; what it could not read is named in `not_scanned`. A name that is not UTF-8 is no reason to
skip a file. The rules are brain's own (`brain.secrets`); when a `gitleaks` binary is on PATH it
runs too on the text files, and its findings are merged, one per path and line.

A module of its own, not part of brain/secrets.py (the rules): it walks the vault (brain.vault),
which reads those rules itself, so one module would close an import cycle.
"""

from __future__ import annotations

import os
from collections.abc import Iterable
from dataclasses import dataclass
from pathlib import Path

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
