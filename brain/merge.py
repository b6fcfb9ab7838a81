"""Line-by-line merging of the vault's files: `brain merge-driver`, and sync's adoption of a vault.

Two machines that each added bullets must never conflict, and an edit both made to one bullet must
keep both lines, never leave conflict markers in a file the index reads. Git finds the regions
both sides changed (`git merge-file`, in C, so a 10,000-line file costs nothing); each such region
is then settled here, line by line:

- what only one side changed is taken from that side, also when the other side changed the line
  next to it (git calls that a conflict; for one-line bullets it is not);
- lines both sides added at the same place are both kept, each once;
- a line both sides changed differently is a clash: both versions are kept (ours, then theirs)
  and the clash is reported, so that a person can keep one.

`.gitattributes` in the vault names the driver (`merge=brain`) for Markdown and synonyms.tsv, and
`merge.brain.driver` in the vault's git config runs `brain merge-driver %O %A %B %P`. In a rebase,
"ours" is the remote's side and "theirs" the local commit being replayed.
"""

from __future__ import annotations

import contextlib
import difflib
import json
import re
import sys
import tempfile
from collections.abc import Iterator
from dataclasses import dataclass
from pathlib import Path

from brain import gitutil
from brain.settings import SYNC_REPORT, current

MARKER = 41  # conflict marker width: no line a person writes starts with 41 '<'
REPORT_ENV = SYNC_REPORT  # where the driver appends its clashes (JSON lines) for sync
ATTRIBUTES = ("*.md merge=brain", "AI/synonyms.tsv merge=brain")
DRIVER_NAME = "brain: keep both sides' lines (brain sync)"


@dataclass(frozen=True)
class Clash:
    """Both sides changed the same lines: both versions were kept, starting at `line`."""

    line: int  # 1-based, in the merged text
    ours: tuple[str, ...]
    theirs: tuple[str, ...]


@dataclass(frozen=True)
class Merged:
    data: bytes
    clashes: tuple[Clash, ...]


Edit = tuple[int, int, list[bytes], int]  # replace base[start:end] with these lines; side 0 or 1


def _edits(base: list[bytes], side: list[bytes], who: int) -> list[Edit]:
    matcher = difflib.SequenceMatcher(None, base, side, autojunk=False)
    return [
        (i1, i2, side[j1:j2], who) for op, i1, i2, j1, j2 in matcher.get_opcodes() if op != "equal"
    ]


def _touch(a: Edit, b: Edit) -> bool:
    """Whether two edits change the same base lines, or insert at the same place. An insertion
    at the edge of a changed region does not touch it: the two apply one after the other."""
    s1, e1, s2, e2 = a[0], a[1], b[0], b[1]
    if s1 == e1 and s2 == e2:
        return s1 == s2
    if s1 == e1:
        return s2 < s1 < e2
    if s2 == e2:
        return s1 < s2 < e1
    return s1 < e2 and s2 < e1


def _union(ours: list[bytes], theirs: list[bytes], base: list[bytes] | None = None) -> list[bytes]:
    """Ours, then theirs' lines that ours does not have and the base did not (new blank lines
    are kept, so that paragraphs stay apart)."""
    have, old = set(ours), set(base or ())
    return ours + [t for t in theirs if t not in old and (not t.strip() or t not in have)]


Found = tuple[int, list[bytes], list[bytes]]  # offset in the merged lines, ours', theirs'


def settle(
    base: list[bytes], ours: list[bytes], theirs: list[bytes]
) -> tuple[list[bytes], list[Found]]:
    """One region both sides changed: the merged lines, and the clashes in it."""
    if theirs in (ours, base):
        return list(ours), []
    if ours == base:
        return list(theirs), []
    if not base:
        return _union(ours, theirs), []
    edits = sorted(
        _edits(base, ours, 0) + _edits(base, theirs, 1), key=lambda e: (e[0], e[1] != e[0], e[3])
    )
    # Edits that touch (transitively) form a group. Sorted by start, a new edit can only touch
    # the last group: the spans of earlier ones end before it starts.
    groups: list[list[Edit]] = []
    for edit in edits:
        if groups and any(_touch(edit, other) for other in groups[-1]):
            groups[-1].append(edit)
        else:
            groups.append([edit])
    out: list[bytes] = []
    clashes: list[Found] = []
    pos = 0
    for group in groups:
        start, end = min(e[0] for e in group), max(e[1] for e in group)
        out += base[pos:start]
        pos = end
        mine = _apply(base, start, end, [e for e in group if e[3] == 0])
        other = _apply(base, start, end, [e for e in group if e[3] == 1])
        if len({e[3] for e in group}) == 1 or mine == other:
            out += mine if group[0][3] == 0 else other
        elif start == end:  # both added lines at the same place
            out += _union(mine, other)
        else:
            clashes.append((len(out), mine, other))
            out += _union(mine, other, base[start:end])
    return out + base[pos:], clashes


def _apply(base: list[bytes], start: int, end: int, edits: list[Edit]) -> list[bytes]:
    """base[start:end] with one side's edits applied (they never overlap: one diff's hunks)."""
    out: list[bytes] = []
    pos = start
    for s, e, lines, _ in edits:
        out += base[pos:s] + lines
        pos = e
    return out + base[pos:end]


def _lines(data: bytes) -> list[bytes]:
    return data.splitlines(keepends=True)


def _joined(lines: list[bytes]) -> bytes:
    """The lines as one text; a line that lost its newline to a merge gets it back."""
    fixed = [
        line if line.endswith(b"\n") or i == len(lines) - 1 else line + b"\n"
        for i, line in enumerate(lines)
    ]
    return b"".join(fixed)


@contextlib.contextmanager
def _three(base: bytes, ours: bytes, theirs: bytes, *, text: bool = True) -> Iterator[Path]:
    """A temp folder holding `base`, `ours` and `theirs`, for git merge-file or a driver;
    ValueError for binary content where a text merge is asked for."""
    if text and b"\0" in base[:8000] + ours[:8000] + theirs[:8000]:
        raise ValueError("binary content")
    with tempfile.TemporaryDirectory(prefix="brain-merge-") as tmp:
        folder = Path(tmp)
        for name, data in (("base", base), ("ours", ours), ("theirs", theirs)):
            (folder / name).write_bytes(data)
        yield folder


def merge(base: bytes, ours: bytes, theirs: bytes) -> Merged:
    """Merge three versions of a text file line by line; never leaves a conflict marker."""
    with _three(base, ours, theirs) as folder:
        proc = gitutil.run(
            folder,
            "merge-file",
            "-p",
            "--diff3",
            f"--marker-size={MARKER}",
            *("-L", "ours", "-L", "base", "-L", "theirs", "ours", "base", "theirs"),
            check=False,
        )
    if proc.returncode < 0 or proc.returncode > 127:
        raise ValueError(gitutil.complaint(proc))
    if proc.returncode == 0:
        return Merged(proc.stdout, ())
    return _settle_markers(_lines(proc.stdout))


def clean(base: bytes, ours: bytes, theirs: bytes, *, union: bool = False) -> bytes | None:
    """git's own three-way merge of a text file (for files brain does not merge line by line):
    the result, or None when both sides changed the same lines (`union`: git's union merge,
    which keeps both). ValueError for binary content."""
    with _three(base, ours, theirs) as folder:
        how = ["--union"] if union else []
        proc = gitutil.run(folder, "merge-file", "-p", *how, "ours", "base", "theirs", check=False)
    return proc.stdout if proc.returncode == 0 else None


def by_driver(
    command: str,
    base: bytes,
    ours: bytes,
    theirs: bytes,
    *,
    path: str,
    cwd: Path,
    timeout: float,
) -> bytes | None:
    """Merge through a driver the person configured (`merge.NAME.driver`), as git runs it:
    `%O %A %B %L %P` replaced, through the shell, the result left in %A; None when it fails."""
    import shlex
    import subprocess

    with _three(base, ours, theirs, text=False) as folder:
        names = {"O": folder / "base", "A": folder / "ours", "B": folder / "theirs"}
        words = {**{k: shlex.quote(str(v)) for k, v in names.items()}, "L": "7", "%": "%"}
        words["P"] = shlex.quote(path)
        line = re.sub(r"%([OABLP%])", lambda m: words[m.group(1)], command)
        try:
            proc = subprocess.run(
                ["sh", "-c", line],
                cwd=cwd,
                env=gitutil.no_git_env(),
                stdin=subprocess.DEVNULL,
                capture_output=True,
                timeout=timeout,
                check=False,
            )
        except (OSError, subprocess.TimeoutExpired):
            return None
        return names["A"].read_bytes() if proc.returncode == 0 else None


def _settle_markers(lines: list[bytes]) -> Merged:
    start, mid, sep, end = (ch * MARKER for ch in (b"<", b"|", b"=", b">"))
    out: list[bytes] = []
    clashes: list[Clash] = []
    i = 0
    while i < len(lines):
        line = lines[i]
        if not line.startswith(start):
            out.append(line)
            i += 1
            continue
        parts: list[list[bytes]] = [[], [], []]
        part = 0
        i += 1
        while i < len(lines):
            line = lines[i]
            if line.startswith(mid) and part == 0:
                part = 1
            elif line.rstrip(b"\r\n") == sep and part == 1:
                part = 2
            elif line.startswith(end) and part == 2:
                break
            else:
                parts[part].append(line)
            i += 1
        i += 1
        ours, base, theirs = parts
        merged, found = settle(base, ours, theirs)
        for offset, mine, other in found:
            clashes.append(Clash(len(out) + offset + 1, tuple(_text(mine)), tuple(_text(other))))
        out += merged
    return Merged(_joined(out), tuple(clashes))


def _text(lines: list[bytes]) -> list[str]:
    return [line.decode("utf-8", "replace").rstrip("\r\n") for line in lines]


@dataclass(frozen=True)
class Carried:
    """What `carry` did to a file: `written` (it held the old text, now the new), `merged` (it
    had changed too: both kept), `kept` (its own change kept, the other could not be merged in:
    a binary file, or a file the change deletes), `same` (it held the new text already)."""

    how: str
    clashes: tuple[Clash, ...] = ()


CARRY_TRIES = 20  # a file rewritten this many times while brain merged it: give up, say so


def _both(base: bytes, one: bytes, other: bytes) -> bytes:
    """`merge` for brain.files.replace: what was written while it replaced a file, kept."""
    return merge(base, one, other).data


def carry(
    root: Path, rel: str, base: bytes | None, new: bytes | None, *, mode: int | None = None
) -> Carried:
    """Bring the change `base` -> `new` (None: no file) into `root/rel`, whatever it holds now.

    A file that still holds `base` becomes `new`; one that changed since (a person typing, another
    program) gets the change merged in line by line, its own lines kept. Compare, then replace
    (brain.files.replace): a write that lands while this runs is merged in on the next try, never
    overwritten. Raises BrainError when the file never stands still."""
    from brain import files
    from brain.errors import BrainError
    from brain.text import printable

    last: tuple[bytes, bytes, str, tuple[Clash, ...]] | None = None  # (read, wrote): a try lost
    for _ in range(CARRY_TRIES):
        now = files.read_in(root, rel)
        clashes: tuple[Clash, ...] = ()
        target: bytes | None
        if now == new:
            return Carried("same")
        if last and now is not None and now.startswith(last[0]) and last[1].endswith(b"\n"):
            # Lines appended while the last try merged (a person typing at the end of the
            # file): they go at the end of what it made, as a merge would put them, without
            # paying for another (a fast typist would outrun git merge-file for ever).
            target, how, clashes = last[1] + now[len(last[0]) :], last[2], last[3]
        elif now == base:
            target, how = new, "written"
        elif new is None:
            return Carried("kept")  # changed here, deleted there: the change here is kept
        elif now is None:
            target, how = new, "written"  # deleted here, changed there: the change is kept
        else:
            try:
                merged = merge(base or b"", now, new)
            except ValueError:
                return Carried("kept")
            target, how, clashes = merged.data, "merged", merged.clashes
        try:
            files.replace(root, rel, target, was=now, mode=mode, merge=_both)
        except files.Changed:
            last = (now, target, how, clashes) if now is not None and target is not None else None
            continue
        return Carried(how, clashes)
    raise BrainError(
        f"{printable(rel)} kept changing while brain merged a change into it; nothing was lost",
        "try again in a moment",
    )


# --- the git merge driver ------------------------------------------------------------------------


def driver(base: Path, ours: Path, theirs: Path, path: str) -> int:
    """`brain merge-driver %O %A %B %P`: the merged text into %A, exit 0; 1 leaves it to git."""
    from brain.text import say

    try:
        merged = merge(base.read_bytes(), ours.read_bytes(), theirs.read_bytes())
        ours.write_bytes(merged.data)
    except (OSError, ValueError) as exc:
        say(f"cannot merge {path} line by line ({exc}); git's merge decides")
        return 1
    if merged.clashes:
        report = current().sync_report
        if report:
            with Path(report).open("a", encoding="utf-8") as fh:
                for c in merged.clashes:
                    doc = {"path": path, "line": c.line, "ours": c.ours, "theirs": c.theirs}
                    fh.write(json.dumps(doc, ensure_ascii=False) + "\n")
        else:
            for c in merged.clashes:
                say(f"both sides changed {path}:{c.line}; both versions kept, keep one")
    return 0


def driver_command() -> str:
    """The `merge.brain.driver` value: this installation's interpreter, as the hooks use."""
    import shlex

    return f"{shlex.quote(sys.executable)} -P -m brain merge-driver %O %A %B %P"
