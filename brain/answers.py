"""What the CLI's runners (brain.run) and the MCP server (brain.mcp_server) both answer with:
text read from arguments, a find within its byte budget, the pack of a project. Below both, so
that neither imports the other (brain.run.run_mcp starts the server).
Standard library only at module level: `brain find` starts here.
"""

from __future__ import annotations

from dataclasses import dataclass
from pathlib import Path
from typing import TYPE_CHECKING

from brain.errors import UsageError

if TYPE_CHECKING:
    from brain.commands.find import FindResult
    from brain.commands.pack import PackResult


def argv_text(text: str, what: str = "the query") -> str:
    """Text from the command line with bytes that are not UTF-8 (a lone surrogate each, as Python
    decodes argv) replaced by U+FFFD, after one line on stderr that says so: the rest of the text
    still counts (a query's other words are searched), and SQLite, files and stdout never see a
    surrogate."""
    from brain.text import has_surrogates, mask_secrets, repair, undecodable

    if not has_surrogates(text):
        return text
    fixed = repair(text)
    said = mask_secrets(fixed)  # before repr: an escape it writes could hide a key from `err`'s
    from brain.present import err

    err(f"brain: {what} is not valid UTF-8 ({undecodable(text)}); read as {said!r}")
    return fixed


def find_within(
    vault: str | None,
    text: str,
    limit: int | None,
    budget: int | None,
    *,
    ranked: bool = False,
) -> tuple[FindResult, int, Path]:
    """`brain find`'s result, its byte budget (the default when None) and the vault, for the CLI
    and MCP alike: the answer, or with `limit` or `ranked` (--all) the ranked list."""
    from brain.commands.find import DEFAULT_BUDGET, find
    from brain.config import resolve_vault

    budget = DEFAULT_BUDGET if budget is None else budget
    if budget < 1:
        raise UsageError("--budget must be a positive number of bytes", "pass e.g. --budget 4000")
    path = resolve_vault(vault)
    return find(path, text, limit=limit, ranked=ranked), budget, path


@dataclass(frozen=True)
class Packed:
    """`brain pack`'s result for the CLI and MCP: None (and `empty`) outside a repository when
    no project is named."""

    result: PackResult | None
    empty: PackResult
    project: str  # as asked (or the repository's folder name)
    vault: Path


def pack_for(
    project: str | None,
    vault: str | None,
    budget: int | None,
    *,
    fresh: bool,
    cwd: Path,
    outside: bool = False,
) -> Packed:
    """The pack of `project`, else of the repository `cwd` is in; outside any repository None,
    or with `outside` (a session-start hook) the pack of no project: the working rules."""
    from brain import gitutil
    from brain.commands import pack as packmod
    from brain.config import resolve_vault

    budget = packmod.DEFAULT_BUDGET if budget is None else budget
    if budget < 1:
        raise UsageError("--budget must be a positive number of tokens", "pass e.g. --budget 1500")
    empty = packmod.empty(budget)
    if project is None:
        root = gitutil.repo_root(cwd)
        if root is None and not outside:
            return Packed(None, empty, "", Path())
        project = root.name if root is not None else None
    if project is not None:
        project = argv_text(project, "the project name")
    path = resolve_vault(vault)
    result = packmod.pack(path, project, budget=budget, fresh=fresh)
    return Packed(result, empty, project or "", path)
