"""The presenters of bullets moving in and out of the vault: `brain locate` (where a bullet or
the vault is), `brain import` and `brain export` (to agents' own instruction files)."""

from __future__ import annotations

from collections.abc import Sequence
from typing import TYPE_CHECKING, Any

from brain.present import Answer, json_text
from brain.present.inbox import WHY_CHARS, echo, propose_line
from brain.text import noun, plural

if TYPE_CHECKING:
    from brain.commands.export import ExportResult
    from brain.commands.import_ import ImportResult
    from brain.commands.locate import LocateResult, VaultFound
    from brain.commands.propose import ProposeResult


def locate(result: LocateResult, *, as_json: bool = False) -> Answer:
    """Where each matching bullet lives and its line as written."""
    code = 0 if result.matches else 1  # no match: the empty list under --json, as find answers
    if as_json:
        return Answer(json_text(result), code=code)
    if not result.matches:
        from brain.commands.locate import missing

        raise missing(result)
    return Answer("\n".join(f"{m.path}:{m.line}: {m.markdown}" for m in result.matches))


def vault_found(found: VaultFound, *, as_json: bool = False) -> Answer:
    """The vault's folder alone on its line (`cd "$(brain locate)"`)."""
    return Answer(json_text(found) if as_json else found.vault)


def import_(result: ImportResult, *, as_json: bool = False) -> Answer:
    """What an import proposed: a line per item, the ones the full inbox held back as one."""
    if as_json:
        return Answer(json_text(result))
    from brain.commands.inbox import FULL

    places = result.places or (result.origin,) * len(result.items)
    lines = [
        _refused(i, where) if i.action == "refused" and i.branch is None else propose_line(i)
        for i, where in zip(result.items, places, strict=True)
        if i.problem != FULL
    ]
    full = sum(1 for i in result.items if i.problem == FULL)
    if full:  # one line, not thousands: they all wait for the same thing
        lines.append(f"{plural(full, 'more item')} not proposed: {FULL}")
    if result.stripped:
        lines.append(
            f"{plural(result.stripped, 'control character')} (terminal escapes, NUL) "
            f"left out of what {result.origin} holds"
        )
    lines.append(
        f"{plural(result.proposed_count, 'proposal')} added to the inbox from {result.origin} "
        f"({result.found_count} found); review {noun(result.proposed_count, 'it', 'them')} with "
        "`brain inbox`"
    )
    return Answer("\n".join(lines))


def _refused(item: ProposeResult, where: str) -> str:
    """A refused item in one line: where it is, why, its start, and what to do."""
    why = echo(item.problem or "", WHY_CHARS)
    return f"{where}: refused ({why}): {echo(item.markdown)}; fix it there and import again"


def _action(targets: Sequence[Any], path: str) -> str:
    """What export did to `path` (the same for every agent that reads it)."""
    return str(next(t.action for t in targets if t.path == path))


def export(
    result: ExportResult, agents: Sequence[str], *, check: bool, as_json: bool = False
) -> Answer:
    """Each file written (or, with `check`, whether it is up to date); exit 1 when one is not."""
    code = 0 if result.ok else 1
    if as_json:
        return Answer(json_text(result), code=code)
    checked = [t for t in result.targets if t.action != "absent"]
    readers: dict[str, list[str]] = {}  # a file several agents read is one line, naming them
    for t in checked:
        readers.setdefault(t.path, []).append(t.agent)
    lines = [
        f"{path}: {_action(checked, path)}"
        + (f" (read by {', '.join(names)})" if len(names) > 1 else "")
        for path, names in readers.items()
    ]
    if check:
        stale = sum(1 for path in readers if _action(checked, path) != "current")
        if stale:
            again = f"brain export {' '.join(agents)}"
            lines.append(f"{plural(stale, 'file')} out of date; run `{again}`")
        elif checked:
            every = "" if len(readers) == 1 else "all "
            lines.append(f"{every}{plural(len(readers), 'file')} up to date")
        else:
            lines.append("nothing exported here yet; `brain export AGENT` writes one")
    return Answer("\n".join(lines), code=code)
