"""`brain lint`: every core-file bullet parses, ends in a valid date, has a unique handle, and
carries no literal credential; no line the index reads holds what the guard flags (brain/guard.py).
`--staged` checks what the commit will hold, not the work tree.

The rules live here, below the commands, because the sync's write-down (brain/gitsync.py) holds
back what fails them as `brain lint --staged` would; the command is this module's `lint`."""

from __future__ import annotations

import os
from collections.abc import Callable
from dataclasses import dataclass
from pathlib import Path

from brain import gitutil, secrets
from brain import vault as vaultmod
from brain.claims import front_matter_problems
from brain.config import CORE_FILES, SYNONYMS, VAULT_CONFIG
from brain.errors import BrainError
from brain.regular import read_regular
from brain.vocab import handle_key


def read_file(vault: Path, rel: str) -> tuple[bytes | None, vaultmod.Problem | None]:
    """A vault file's bytes (None when it does not exist), or None and why it was not read: a link
    out of the vault is not followed, and a file that cannot be read is never taken as clean."""
    path = vault / rel
    why = vaultmod.link_problem(path, vault)
    if why:
        return None, vaultmod.Problem(rel, None, why)
    try:
        size = vaultmod.oversized(path)
        if size is not None:
            return None, vaultmod.too_big(rel, size)
        return read_regular(path), None
    except (FileNotFoundError, IsADirectoryError):
        return None, None
    except OSError as exc:
        return None, vaultmod.Problem(rel, None, f"cannot read it ({exc.strerror}); not checked")


POLICY = VAULT_CONFIG  # the vault's settings: `lint: strict` (or `standard`), beside `review`
LINT_MODES = ("standard", "strict")


@dataclass(frozen=True)
class LintResult:
    files: tuple[str, ...]  # what was checked
    bullet_count: int
    problems: tuple[vaultmod.Problem, ...]
    strict: bool = False  # strict mode applied (--strict, or the policy file)

    @property
    def ok(self) -> bool:
        return not self.problems


def _inside(vault: Path, path: Path) -> str | None:
    """`path` as a vault-relative '/'-path, or None. Its folder is resolved (the working directory
    may be reached through a link) but not the file itself: a link out of the vault is named as
    what it is when it is read, not as a path outside."""
    absolute = Path(os.path.normpath(path.absolute()))
    for candidate in (absolute, absolute.parent.resolve() / absolute.name):
        if candidate.is_relative_to(vault):
            rel = candidate.relative_to(vault).as_posix()
            return None if rel == "." else rel
    return None


def _normalise(vault: Path, paths: list[str]) -> list[str]:
    out = []
    for p in paths:
        path = Path(p)
        # relative to the working directory, else to the vault (never for an absolute path)
        rel = _inside(vault, path)
        if rel is None and not path.is_absolute():
            rel = _inside(vault, vault / path)
        if rel is None:
            raise BrainError(
                f"{p} is not inside the vault {vault}",
                "name files inside the vault, or none to check them all",
            )
        out.append(rel)
    return out


def _source(
    vault: Path, wanted: set[str] | None, staged: bool, unread: dict[str, vaultmod.Problem]
) -> tuple[list[str], Callable[[str], bytes | None]]:
    """(the files to check, how to read one): the git index, or the work tree, where a file that
    is not read goes into `unread` with the reason."""
    if staged:
        if not gitutil.is_repo(vault):
            raise BrainError(
                f"{vault} is not a git repository, so nothing is staged",
                "run lint without --staged",
            )
        scope = [p for p in gitutil.staged_paths(vault) if wanted is None or p in wanted]
        return scope, lambda rel: gitutil.staged_blob(vault, rel)

    def read(rel: str) -> bytes | None:
        data, skipped = read_file(vault, rel)
        if skipped is not None:
            unread[rel] = skipped
        return data

    if wanted is not None:
        return sorted(wanted), read
    # the core files and synonyms for everything; the notes for the guard, as the index reads them
    notes = [p for p in vaultmod.indexed(vault).files if p not in CORE_FILES and p != SYNONYMS]
    return [*CORE_FILES, SYNONYMS, *notes], read


def _policy_mode(data: bytes, where: str) -> str:
    """The `lint` mode a policy file sets ("standard" when it sets none), or a BrainError naming
    the file and what is wrong with it."""
    from brain.settings import read_yaml

    doc = read_yaml(where, data, "write it as `lint: strict` (or `lint: standard`)")
    mode = doc.get("lint", "standard")
    if mode not in LINT_MODES:
        raise BrainError(
            f"{where}: `lint` is {mode!r}, not one of {', '.join(LINT_MODES)}",
            "write `lint: strict` or `lint: standard`",
        )
    return str(mode)


def policy_strict(vault: Path, *, staged: bool = False) -> bool:
    """Whether the vault's policy asks for strict lint: the stricter of the committed policy file
    and the one about to be committed (staged) or edited (work tree), so that switching strict off
    takes a commit that is itself checked strictly, and an edit alone never does."""
    if staged:
        current = gitutil.staged_blob(vault, POLICY)
    else:
        current, skipped = read_file(vault, POLICY)
        if skipped is not None:
            raise BrainError(f"{skipped}", f"{POLICY} must be a readable file inside the vault")
    modes = [_policy_mode(current, POLICY)] if current is not None else []
    committed = gitutil.head_file(vault, POLICY)
    if committed is not None:
        modes.append(_policy_mode(committed, f"{POLICY} (committed)"))
    return "strict" in modes


def _strict_bullet(rel: str, unit: vaultmod.Unit, line: str) -> list[vaultmod.Problem]:
    from brain import guard

    tuning = rel == CORE_FILES[2]  # TUNINGS: how the agent should work, addressed to it
    handle, aliases, fact = unit.handle, unit.aliases, unit.text
    try:
        # the line as written (its credentials masked), not as the index serves it: a line the
        # guard flags is defused there, and strict reads the words it spells (guard.plain)
        b = vaultmod.parse_bullet(secrets.redact(line))
        handle, aliases, fact = b.handle, b.aliases, b.fact
    except ValueError:
        pass
    parts = [("handle", handle), *(("alias", a) for a in aliases), ("fact", fact)]
    return [
        vaultmod.Problem(rel, unit.line, f"{flag.rule}: in the {part}, {flag.detail}")
        for part, text in parts
        for flag in guard.strict(text, tuning=tuning)
    ]


def _strict_synonyms(text: str, rel: str) -> list[vaultmod.Problem]:
    from brain import guard

    rows = []
    for number, line in enumerate(text.split("\n"), start=1):
        cells = line.split("\t")
        if number == 1 and cells[0].strip().lower() == "term":
            continue
        if len(cells) != 2 or line.lstrip().startswith("#"):
            continue  # blank, a comment, or malformed (named already)
        for flag in guard.strict_synonym(cells[0].strip(), cells[1].strip()):
            rows.append(vaultmod.Problem(rel, number, str(flag)))
    return rows


def bullet_problems(
    rel: str, unit: vaultmod.Unit, line: str, *, strict: bool
) -> list[vaultmod.Problem]:
    """A core-file bullet's credential, and in strict mode what is not plain prose in it: what
    lint says of each bullet, and what `brain inbox approve` checks before it writes one
    (`check_bullet`)."""
    problems = _strict_bullet(rel, unit, line) if strict else []
    for rule, masked in secrets.scan_line(line):
        problems.append(
            vaultmod.Problem(
                rel,
                unit.line,
                f"bullet carries a credential ({rule}: {masked}); remove it and keep "
                "secrets in a password manager",
            )
        )
    return problems


def check_bullet(rel: str, line: str, *, strict: bool) -> list[vaultmod.Problem]:
    """What lint would say of `line` as a bullet of core file `rel` (its line number 1): it is
    parsed, screened by the guard, and checked by `bullet_problems`, as lint does each bullet of
    the file. A handle another bullet holds is the caller's to judge (approve replaces it)."""
    parsed = vaultmod.parse(rel, line.encode("utf-8", "surrogateescape"))
    problems = list(parsed.problems)
    for unit in parsed.units:
        if unit.kind == "bullet":
            problems += bullet_problems(rel, unit, line, strict=strict)
    return problems


def _file_problems(rel: str, data: bytes, *, strict: bool) -> list[vaultmod.Problem]:
    """synonyms.tsv's malformed (and, strict, unfit) rows; a note's lines the guard flags."""
    named = vaultmod.name_problem(rel)
    if named is not None:
        return [named]
    text, problems = vaultmod.decode(data, rel)
    if rel == SYNONYMS:
        problems += vaultmod.parse_synonyms(text, rel)[1]
        if strict:
            problems += _strict_synonyms(text, rel)
    else:
        problems += vaultmod.guarded(vaultmod.blank_comments(text), rel)
        problems += front_matter_problems(data, rel)
    return problems


def lint(
    vault: Path,
    paths: list[str] | None = None,
    *,
    staged: bool = False,
    strict: bool | None = None,
) -> LintResult:
    """Check the vault's core files (or the named ones, or the staged ones). `strict` None: as the
    vault's policy file says."""
    if strict is None:
        strict = policy_strict(vault, staged=staged)
    wanted = set(_normalise(vault, paths)) if paths else None
    if wanted and not staged:
        absent = sorted(p for p in wanted if not (vault / p).is_file())
        if absent:
            raise BrainError(f"no such file in the vault: {absent[0]}", "check the path")
    unread: dict[str, vaultmod.Problem] = {}
    scope, read = _source(vault, wanted, staged, unread)
    checked = [p for p in scope if p in CORE_FILES or p == SYNONYMS or p.endswith(".md")]
    problems: list[vaultmod.Problem] = []
    if wanted is None and not staged:
        # what the index skips (links out of the vault, names that are not UTF-8): reindex counts
        # these as problems and sends people here to see them
        problems += [p for p in vaultmod.indexed(vault).skipped if p.path not in checked]
    bullets = 0
    # Handles must be unique across all three core files, so all three are read whatever the scope.
    seen: dict[str, tuple[str, int]] = {}
    for rel in CORE_FILES:
        data = read(rel)
        if data is None:
            continue
        parsed = vaultmod.parse(rel, data)
        text, _ = vaultmod.decode(data, rel)
        lines = text.split("\n")
        in_scope = rel in checked
        if in_scope:
            problems += parsed.problems
        for unit in parsed.units:
            if unit.kind != "bullet":
                continue
            bullets += in_scope
            key = handle_key(unit.handle)
            first = seen.get(key)
            if first is None:
                seen[key] = (rel, unit.line)
            elif in_scope:
                problems.append(
                    vaultmod.Problem(
                        rel,
                        unit.line,
                        f"duplicate handle {unit.handle!r} (first at {first[0]}:{first[1]}); "
                        "rename one or merge them",
                    )
                )
            if in_scope:
                problems += bullet_problems(rel, unit, lines[unit.line - 1], strict=strict)
    for rel in checked:
        data = None if rel in CORE_FILES else read(rel)
        if data is not None:
            problems += _file_problems(rel, data, strict=strict)
    problems += [p for rel, p in unread.items() if rel in checked]
    problems.sort(key=lambda p: (p.path, p.line or 0))
    return LintResult(
        tuple(secrets.redact(rel) for rel in checked), bullets, tuple(problems), strict
    )
