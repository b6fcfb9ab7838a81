"""The presenters of the commands that read or change the vault: reindex, sync, lint, secrets,
locate, propose, inbox, import, export, verify, learn, tend, review. Standard library only at
module level (reindex and sync run from hooks on the fast path)."""

from __future__ import annotations

from collections.abc import Callable, Sequence
from dataclasses import dataclass
from typing import TYPE_CHECKING, Any

from brain.present import Answer, data, dumps, json_text, noun, plural
from brain.text import printable

if TYPE_CHECKING:
    from brain.commands.export import ExportResult
    from brain.commands.import_ import ImportResult
    from brain.commands.inbox import ApproveResult, DropResult, InboxResult
    from brain.commands.lint import LintResult
    from brain.commands.locate import LocateResult, VaultFound
    from brain.commands.propose import ProposeResult
    from brain.commands.reindex import ReindexResult
    from brain.commands.secrets import HistoryResult, SecretsResult
    from brain.commands.sync import SyncStatus
    from brain.gitsync import SyncResult
    from brain.secrets import CommitScan
    from brain.vault import Problem


def reindex(result: ReindexResult, *, as_json: bool = False) -> Answer:
    if as_json:
        return Answer(json_text(result))
    what = "rebuilt" if result.full else "updated"
    bullets = plural(result.bullet_count, "bullet")
    notes = plural(result.unit_count - result.bullet_count, "note paragraph")
    line = (
        f"Index {what}: {bullets} and {notes} from {plural(result.file_count, 'file')} "
        f"({len(result.changed)} changed, {len(result.removed)} removed)"
    )
    if result.embedded:
        line += f", {result.embedded} embedded"
    note = ""
    if result.problem_count:
        found = plural(result.problem_count, "problem")
        them = noun(result.problem_count, "it", "them")
        note = f"{found} in the vault; run `brain lint` to see {them}"
    return Answer(f"{line} in {result.ms:.0f} ms.", note)


def sync_status(s: SyncStatus, *, as_json: bool = False) -> Answer:
    """`brain sync status` (and `on`, `off`): on or off, the remote, what waits on either side."""
    if as_json:
        return Answer(json_text(s))
    state = "on" if s.sync == "on" else f"off ({s.why})"
    lines = [f"Sync: {state}"]
    if s.remote:
        lines.append(f"Remote: {s.remote} {s.url} (branch {s.branch})")
    else:
        lines.append("Remote: not connected (`brain sync connect URL`)")
    changed, ahead = plural(s.changes, "changed file"), plural(s.ahead, "commit")
    lines.append(f"Here: {changed} not written down, {ahead} not sent")
    if s.remote:
        when = f"as of the fetch at {s.fetched_at}" if s.fetched_at else "never fetched"
        lines.append(f"Remote: {plural(s.behind, 'commit')} not received ({when})")
    if s.retry_at:
        lines.append(f"Offline: background passes wait until {s.retry_at}")
    if s.last_summary:
        lines.append(f"Last pass ({s.last_at}): {s.last_summary}")
    return Answer("\n".join(lines))


def sync(result: SyncResult, *, as_json: bool = False, background: bool = False) -> Answer:
    """A sync pass or `connect`; exit 1 when something is left waiting (a background pass a hook
    started never fails)."""
    calm = result.outcome in ("synced", "up-to-date", "off") or background
    code = 0 if calm and not result.waiting and not result.conflicts else 1
    # the summary is one line naming files (brain.gitsync.describe): a tab or a U+202E in a name
    # is escaped, as every name brain prints (README); the JSON keeps it exactly (`dumps`)
    return Answer(json_text(result) if as_json else printable(result.summary), code=code)


@dataclass(frozen=True)
class LintDoc:
    """`brain lint --json` (README: JSON keys): the verdict first."""

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


def propose_line(r: ProposeResult) -> str:
    to = f" (for {r.to})" if r.to else ""
    if r.branch is not None:  # `proposals: team`: a branch of the shared remote
        return _team_line(r, to)
    if r.action == "proposed":
        head = f"Proposed as #{r.number}{to}: {r.markdown}"
    elif r.action == "queued":
        head = f"Already in the inbox: {r.markdown}"
    elif r.action == "known":
        head = f"Already in the vault: {r.markdown}"
    else:
        head = f"Refused ({r.problem}): {r.markdown}"
    if r.updates and r.action == "proposed":
        head += f"\n  updates {r.updates}: {r.current}"
    return head


def _team_line(r: ProposeResult, to: str) -> str:
    if r.action == "proposed":
        where = "on the shared remote" if r.sent else "here, not sent yet"
        head = f"Proposed {where} as {r.branch}{to}: {r.markdown}"
    elif r.action == "queued":
        head = f"Already proposed ({r.branch}): {r.markdown}"
    else:
        return f"Refused ({r.problem}): {r.markdown}"
    if r.updates and r.action == "proposed":
        head += f"\n  updates {r.updates}: {r.current}"
    if r.pr:
        head += f"\n  pull request: {r.pr}"
    if r.note:
        head += f"\n  {r.note}"
    return head


def propose(result: ProposeResult, *, as_json: bool = False) -> Answer:
    return Answer(json_text(result) if as_json else propose_line(result))


def import_(result: ImportResult, *, as_json: bool = False) -> Answer:
    """What an import proposed: a line per item, the ones the full inbox held back as one."""
    if as_json:
        return Answer(json_text(result))
    from brain.commands.inbox import FULL

    lines = [propose_line(i) for i in result.items if i.problem != FULL]
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


def _action(targets: Sequence[Any], path: str) -> str:
    """What export did to `path` (the same for every agent that reads it)."""
    return str(next(t.action for t in targets if t.path == path))


def inbox(listing: InboxResult, *, as_json: bool = False) -> Answer:
    """The queue, a proposal a line (with what it updates or why it is not a bullet)."""
    recovered = (
        f"finished an interrupted approval: {listing.recovered}" if listing.recovered else ""
    )
    if as_json:
        return Answer(json_text(listing))
    note = [listing.note] if listing.note else []
    if not listing.proposals:
        return Answer("\n".join(["The inbox is empty.", *note]), recovered)
    lines = []
    for p in listing.proposals:
        # printable: propose refuses control characters, but a line pasted in by hand may hold ESC
        to_note = f"  (for {printable(p.to)})" if p.to else ""
        lines.append(f"{p.number:>3}. {printable(p.markdown)}{to_note}")
        if p.kind == "team":
            lines.append(f"     by {printable(p.by or '?')}, {(p.at or '')[:16]}, on {p.branch}")
        elif p.kind == "unsent":
            lines.append(f"     by {printable(p.by or '?')}: waits here; `brain sync` sends it")
        if p.problem:
            lines.append(f"     not a valid bullet: {printable(p.problem)}")
        elif p.updates:
            lines.append(f"     updates {printable(p.updates)}: {printable(p.current or '')}")
    shared = sum(p.kind in ("team", "unsent") for p in listing.proposals)
    where = f"in {listing.path}"
    if shared:  # `proposals: team`: some are branches of the shared remote
        own = len(listing.proposals) - shared
        where = f"({own} in {listing.path}, {shared} on the shared remote)"
    lines.append(
        f"{plural(len(listing.proposals), 'proposal')} {where}: `brain inbox approve N "
        "[--to MEMORY|LEARNINGS|TUNINGS]` or `brain inbox drop N`"
    )
    return Answer("\n".join([*lines, *note]), recovered)


def approved(results: Sequence[ApproveResult], *, one: bool, as_json: bool = False) -> Answer:
    """What `inbox approve` did; `one` (a single number given) answers as one object."""
    if as_json:
        docs = [data(r) for r in results]
        return Answer(dumps(docs[0] if one else {"approved": docs}))
    lines = []
    for r in results:
        verb = "Replaced" if r.replaced else "Approved"
        lines.append(f"{verb} #{r.number} in {r.path}:{r.line}: {printable(r.markdown)}")
        if r.replaced:
            lines.append(f"  was: {printable(r.replaced)}")
        if r.pushed:
            lines.append(f"  merged and pushed ({r.pushed}); {r.commit}")
    if all(r.pushed for r in results):
        return Answer("\n".join([*lines, f"{results[-1].remaining} left in the inbox."]))
    from brain.commands.inbox import commit_advice

    # one piece of advice for them all, naming each file once (one each repeated it per file)
    here = [r for r in results if not r.pushed]  # the team's were committed, and said so
    commit = (
        commit_advice(here[0].vault, [f for r in here for f in r.files or (r.path,)])
        if len(here) > 1
        else here[0].commit
    )
    lines.append(
        f"Index updated; {results[-1].remaining} left in the inbox. Not committed: {commit}."
    )
    return Answer("\n".join(lines))


def dropped(results: Sequence[DropResult], *, one: bool, as_json: bool = False) -> Answer:
    """What `inbox drop` did; `one` (a single number given) answers as one object."""
    if as_json:
        docs = [data(r) for r in results]
        return Answer(dumps(docs[0] if one else {"dropped": docs}))
    if one:
        (r,) = results
        return Answer(f"Dropped #{r.number}: {r.markdown} ({r.remaining} left)")
    lines = [f"Dropped #{r.number}: {r.markdown}" for r in results]
    return Answer("\n".join([*lines, f"{results[-1].remaining} left in the inbox."]))
