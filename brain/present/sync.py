"""The presenters of `brain reindex` and `brain sync`, which hooks run after every change:
standard library only at module level (the fast path)."""

from __future__ import annotations

from typing import TYPE_CHECKING

from brain.present import Answer, json_text
from brain.text import noun, plural, printable

if TYPE_CHECKING:
    from brain.commands.reindex import ReindexResult
    from brain.commands.sync import SyncStatus
    from brain.gitsync import SyncResult


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
        # fetched_at: the last fetch that worked (a failed one leaves the count as it was)
        when = f"as of the fetch at {s.fetched_at}" if s.fetched_at else "no fetch has reached it"
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
