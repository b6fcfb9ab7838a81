"""Team review on the shared remote: with `proposals: team` in AI/config.yaml, a proposal is a
commit on its own branch of the vault's remote (`brain/proposal-<id>`), and a person on any
machine approves it (merged into the vault's branch and pushed) or drops it (the branch deleted).

A proposal's commit is built from git objects (blob, tree, commit, with pygit2) on top of the
remote's head as last fetched: the work tree, the index and the current branch are never touched.
It changes one core file, as approving it would (the bullet added under `## From the inbox`, or
the bullet of its handle replaced), so the branch's diff is what a reviewer reads, on GitHub too.
Its id is a hash of the bullet's handle and fact: two machines proposing one fact make one branch.

Made offline, it waits on this machine under refs/brain/proposals/ (a ref of this clone, never
pushed by a plain `git push`) and goes with the next `brain sync` pass. Every commit leaves only
after the credential scan sync runs on its own commits (brain.secrets.scan_commits).

An approval pushes the merge and the branch's deletion in one atomic push, each leased on the
value it read (`--force-with-lease=REF:SHA`): of two machines approving one proposal, one push
lands and the other is refused whole; the loser fetches, finds the branch gone and the merge's
`Brain-Approved: <id>` trailer on the branch, and says so. A push cut off mid-way lands whole
or not at all, so the next approve finds the proposal either merged or still waiting.
Git runs through brain/gitutil.py, reaching the remote as `brain sync` does (brain/gitsync.py).
"""

from __future__ import annotations

import contextlib
import hashlib
import re
import shutil
import time
from collections.abc import Callable, Sequence
from dataclasses import dataclass
from pathlib import Path
from typing import Any

from brain import gitutil
from brain.errors import BrainError
from brain.gitsync import LOST_RACE, PROPOSAL_BRANCH, UNSENT

PREFIX = PROPOSAL_BRANCH  # the remote's branch of a proposal: brain/proposal-<id>
WAITING = UNSENT  # this clone's proposals the remote has not received yet
SUBJECT = "brain propose: "
TRAILER = "Brain-Proposal"
TARGET = "Brain-To"
APPROVED = "Brain-Approved"
PUSH_TRIES = 5  # an approval whose branch moved under it (another approval landed) merges again
LIST_TIMEOUT = 20.0  # seconds the listing's fetch may take before it shows what it last saw
GH_TIMEOUT = 60.0
BLOB = 0o100644  # a file blob's mode in a tree (git's regular, non-executable file)


def enabled(vault: Path) -> bool:
    """Whether the vault's AI/config.yaml says `proposals: team` (every clone reads the same)."""
    from brain.config import proposals_mode

    return proposals_mode(vault) == "team"


_ID = re.compile(r"[0-9a-f]{12}")  # what proposal_id makes


def proposal_id(key: str) -> str:
    """The id of the proposal whose (handle, fact) key is `key`: the same fact, the same id."""
    return hashlib.sha256(key.encode("utf-8")).hexdigest()[:12]


@dataclass(frozen=True)
class Remote:
    name: str  # origin
    url: str
    branch: str  # the remote's branch the vault syncs with (main)
    conf: dict[str, str]

    @property
    def head(self) -> str:
        return f"refs/remotes/{self.name}/{self.branch}"

    def tracking(self, pid: str) -> str:
        return f"refs/remotes/{self.name}/{PREFIX}{pid}"


def remote(vault: Path) -> Remote | None:
    """The remote and branch `brain sync` uses for this vault, None when it is not connected."""
    from brain import gitsync

    conf = gitsync.read_config(vault)
    branch = conf.get("brain.branch") or gitsync._out(
        vault, "symbolic-ref", "--quiet", "--short", "HEAD"
    )
    where = gitsync.link(conf, branch) if branch else None
    return Remote(where[0], where[1], where[2], conf) if where else None


def _git(vault: Path, r: Remote, *args: str, most: float | None = None) -> Any:
    """A git command that talks to the remote, as a sync pass runs it (no prompt, bounded)."""
    from brain import gitsync

    net = gitsync._net(r.conf)
    return gitutil.run(
        vault,
        *args,
        check=False,
        env=net["env"],
        config=net["config"],
        timeout=most or net["most"],
    )


def fetch(vault: Path, r: Remote, *, most: float | None = None) -> str:
    """Fetch the remote's branch and every proposal branch (pruning those gone); "" when it
    worked, else git's reason in one line."""
    from brain import autosync

    spec = f"+refs/heads/{PREFIX}*:refs/remotes/{r.name}/{PREFIX}*"
    head = f"+refs/heads/{r.branch}:{r.head}"
    gd = autosync.own_git_dir(vault)  # no git run: the listing's subprocesses are counted
    before = autosync.fetch_time(gd) if gd is not None else None
    try:
        proc = _git(
            vault, r, "fetch", "--quiet", "--no-tags", "--prune", r.name, head, spec, most=most
        )
        failed = ""
        if proc.returncode != 0:
            # a remote with no commit yet has no branch to fetch: proposals only
            proc2 = _git(
                vault, r, "fetch", "--quiet", "--no-tags", "--prune", r.name, spec, most=most
            )
            failed = "" if proc2.returncode == 0 else gitutil.complaint(proc)
    except gitutil.GitTimeout as exc:
        failed = exc.message
    if gd is not None:  # what sync status dates the remote's count by (a failure empties it)
        autosync.keep_fetched(vault, gd, before)
    return failed


# --- reading proposals ---------------------------------------------------------------------------


@dataclass(frozen=True)
class TeamProposal:
    id: str
    commit: str
    markdown: str  # the bullet, as its commit's subject names it
    target: str  # the core file it changes
    by: str  # who proposed it (the commit's author)
    at: str  # when (the commit's time, brain.when's ISO form)
    sent: bool  # on the remote; False: waiting on this machine to be sent
    problem: str  # why it cannot be approved as it stands ("" when it can)

    @property
    def branch(self) -> str:
        return f"{PREFIX}{self.id}"


MORE = "its commit changes more of the file than its bullet"


def _parse(repo: Any, pid: str, sha: str, sent: bool, head: str | None) -> TeamProposal:
    """A proposal's commit read back; one that is not as propose makes it says why. `head` is
    the remote's branch as last fetched (None: not known), which its parent must be in."""
    from brain.vault import APPROVED_HEADING
    from brain.when import at_epoch

    commit = gitutil.commit_of(repo, sha)
    subject, _, body = commit.message.partition("\n")
    trailers = dict(
        (k.strip(), v.strip())
        for k, sep, v in (line.partition(":") for line in body.splitlines())
        if sep
    )
    bullet = subject.removeprefix(SUBJECT).strip() if subject.startswith(SUBJECT) else ""
    target = trailers.get(TARGET, "")
    problem = ""
    if not _ID.fullmatch(pid):  # a look-alike of another's name, an invisible character
        problem = f"its branch is not named as propose names one ({PREFIX} and 12 hex digits)"
    elif not bullet or trailers.get(TRAILER) != pid or not target:
        problem = "its commit is not a brain proposal (no bullet, id or file in its message)"
    elif len(commit.parents) != 1:
        problem = "its branch was rewritten: it no longer holds one commit on the vault's branch"
    elif head and not gitutil.in_history(repo, str(commit.parents[0].id), head):
        # its parent's history would come with the merge, to every clone, unreviewed
        problem = "its commit is not built on the vault's branch (another history)"
    else:
        deltas = commit.parents[0].tree.diff_to_tree(commit.tree).deltas
        changed = {f.path for d in deltas for f in (d.old_file, d.new_file)}
        sizes = [_size(repo, c.tree, target) for c in (commit.parents[0], commit)]
        if changed != {target}:
            problem = f"its commit changes {', '.join(sorted(changed)) or 'nothing'}, not {target}"
        elif sizes[1] - sizes[0] > len(bullet.encode("utf-8")) + len(APPROVED_HEADING) + 8:
            problem = MORE  # said from the objects' headers: a huge file is never read
        else:
            before = _text(repo, commit.parents[0].tree, target).split("\n")
            problem = _more_than(bullet, before, _text(repo, commit.tree, target).split("\n"))
    return TeamProposal(
        pid, sha, bullet, target, commit.author.name, at_epoch(commit.commit_time), sent, problem
    )


def _more_than(bullet: str, before: list[str], after: list[str]) -> str:
    """Why a proposal's change of its file is not what propose makes ("" when it is): the
    bullet added, perhaps `## From the inbox` and blank lines for it, at most one line replaced
    and only the bullet of its own handle. A branch pushed by hand that carries anything more
    (another heading, another handle's bullet deleted) is not merged: the inbox shows the
    bullet alone, so anything else would reach the file unread."""
    from collections import Counter

    from brain.vault import APPROVED_HEADING

    added = Counter(after) - Counter(before)
    removed = Counter(before) - Counter(after)
    if added[bullet] != 1:
        return "its commit does not add its bullet to the file"
    extra = [line for line in added if line.strip() and line not in (bullet, APPROVED_HEADING)]
    gone = [line for line, n in removed.items() for _ in range(n) if line.strip()]
    if extra or len(gone) > 1 or (gone and _handle(gone[0]) != _handle(bullet)):
        return MORE
    return ""


def _handle(line: str) -> str | None:
    """The handle key of bullet `line`, None when it is not a bullet."""
    from brain.vault import parse_head
    from brain.vocab import handle_key

    try:
        return handle_key(parse_head(line)[0])
    except ValueError:
        return None


def _text(repo: Any, tree: Any, path: str) -> str:
    """The file at `path` of `tree` ("" when it has none); a byte that is not UTF-8 (a file
    saved as cp1252) is kept as a surrogate, so `_bytes` writes it back as it was."""
    try:
        return str(repo[tree[path].id].read_raw().decode("utf-8", "surrogateescape"))
    except KeyError:
        return ""


def _size(repo: Any, tree: Any, path: str) -> int:
    """The size of the file at `path` of `tree` (0 when it has none), from its object's header."""
    try:
        return int(repo.odb.read_header(tree[path].id)[1])
    except KeyError:
        return 0


def _bytes(text: str) -> bytes:
    """`text` as `_text` read it, back to the file's own bytes."""
    return text.encode("utf-8", "surrogateescape")


@dataclass(frozen=True)
class Listing:
    proposals: tuple[TeamProposal, ...]
    note: str  # one line when the remote could not be asked (listed as last fetched), else ""


def listing(vault: Path, *, refresh: bool = True) -> Listing:
    """The open proposals of the remote (fetched first, with `refresh`) and this clone's unsent
    ones, oldest first: a new proposal takes the next number, the others keep theirs."""
    try:
        repo = gitutil.open_git(_git_dir(vault))
    except BrainError:
        return Listing((), "the vault is not a git repository, so it has no team proposals")
    r = remote(vault)
    note = ""
    if r is None:
        note = "not connected: team proposals wait here (`brain sync connect URL`)"
    elif refresh:
        failed = fetch(vault, r, most=LIST_TIMEOUT)
        if failed:
            note = f"the remote could not be reached ({failed}): its proposals as last fetched"
    found: dict[str, TeamProposal] = {}
    there = r.tracking("") if r is not None else ""  # refs/remotes/origin/brain/proposal-
    # one pass over the refs: a git process a branch took seconds at a few hundred branches
    tips = gitutil.tips_under(repo, WAITING, *((there, r.head) if r is not None else ()))
    head = tips.get(r.head) if r is not None else None
    for ref, sha in tips.items():
        if there and ref.startswith(there):
            pid = ref.removeprefix(there)
            found[pid] = _parse(repo, pid, sha, True, head)
    for ref, sha in tips.items():
        pid = ref.removeprefix(WAITING)
        if ref.startswith(WAITING) and pid not in found:
            found[pid] = _parse(repo, pid, sha, False, head)
    ordered = sorted(found.values(), key=lambda p: (p.at, p.id))
    return Listing(tuple(ordered), note)


def _listed_path(vault: Path) -> Path:
    from brain import config

    return config.state_dir() / "team" / f"{config.index_path(vault).stem}.listed"


def remember_listed(vault: Path, branches: Sequence[str]) -> None:
    """Keep the proposals in the order this machine last showed them (`brain inbox`, the
    desk's page), one a line (a branch, or brain.commands.inbox.listed_as of an inbox line):
    the numbers a person then types mean these, whatever the fetches since did
    (brain.commands.inbox.as_listed). One that cannot be written leaves none."""
    from brain.files import write_atomic

    path = _listed_path(vault)
    try:
        write_atomic(path, "".join(f"{b}\n" for b in branches))
    except OSError:
        # a full disk: the listing before this one is not what the person reads now, and
        # numbers checked against it would be refused (or worse) until a listing is kept
        with contextlib.suppress(OSError):
            path.unlink()
        raise


def remembered(vault: Path) -> tuple[str, ...] | None:
    """The branches `remember_listed` kept for this vault, None when it never listed them."""
    try:
        text = _listed_path(vault).read_text(encoding="utf-8", errors="replace")
    except OSError:
        return None
    return tuple(line for line in text.split("\n") if line)


def _refs(vault: Path, prefix: str) -> list[str]:
    """The refs whose names start with `prefix` (for-each-ref matches whole path components)."""
    folder = prefix.rsplit("/", 1)[0] + "/"
    proc = gitutil.run(vault, "for-each-ref", "--format=%(refname)", folder, check=False)
    out = proc.stdout.decode("utf-8", "replace").split("\n")
    return [line for line in out if line.startswith(prefix)]


def _rev(vault: Path, ref: str) -> str | None:
    proc = gitutil.run(vault, "rev-parse", "--verify", "--quiet", f"{ref}^{{commit}}", check=False)
    return proc.stdout.decode().strip() if proc.returncode == 0 else None


def _git_dir(vault: Path) -> Path:
    from brain.gitsync import git_dir

    return git_dir(vault)


# --- proposing -----------------------------------------------------------------------------------


@dataclass(frozen=True)
class Draft:
    """One proposal to make: its bullet, the core file it changes and how."""

    key: str  # the (handle, fact) key its id is made from
    markdown: str
    target: str
    edit: Callable[[str], str]  # the target file's text -> its text with the proposal applied


@dataclass(frozen=True)
class Sent:
    id: str
    branch: str
    action: str  # proposed | queued (the remote, or this clone, has it already)
    sent: bool  # on the remote now; False: waits here for the next pass
    note: str  # one line when it waits (why), else ""


def propose(vault: Path, drafts: Sequence[Draft]) -> list[Sent]:
    """Make each draft a proposal commit on the remote's head and push them all in one push;
    offline (or not connected) they wait here. A draft the remote or this clone already holds
    is not made again."""
    from brain.gitsync import _signature

    r = remote(vault)
    failed = fetch(vault, r) if r is not None else ""
    repo = gitutil.open_git(_git_dir(vault))
    base = (_rev(vault, r.head) if r is not None else None) or _rev(vault, "HEAD")
    if base is None:
        raise BrainError(
            "the vault has no commit yet, so a team proposal has nothing to build on",
            "run `brain sync` once, then propose again",
        )
    conf = r.conf if r is not None else {}
    author, committer = _signature(conf), _signature(conf, "COMMITTER")
    out: list[Sent] = []
    made: list[str] = []
    for d in drafts:
        pid = proposal_id(d.key)
        there = r is not None and _rev(vault, r.tracking(pid)) is not None
        if there or _rev(vault, WAITING + pid) is not None:
            out.append(Sent(pid, PREFIX + pid, "queued", there, ""))
            continue
        parent = gitutil.commit_of(repo, base)
        idx = gitutil.new_index()
        idx.read_tree(parent.tree)
        new = _bytes(d.edit(_text(repo, parent.tree, d.target)))
        idx.add(gitutil.index_entry(d.target, repo.create_blob(new), BLOB))
        message = f"{SUBJECT}{d.markdown}\n\n{TRAILER}: {pid}\n{TARGET}: {d.target}\n"
        sha = repo.create_commit(None, author, committer, message, idx.write_tree(repo), [base])
        gitutil.run(vault, "update-ref", WAITING + pid, str(sha), "0" * 40)
        made.append(pid)
        out.append(Sent(pid, PREFIX + pid, "proposed", False, ""))
    if not made:
        return out
    why = failed or ("not connected" if r is None else "")
    if not why and r is not None:
        why = send_waiting(vault, r, only=made)[1]
    after = {p: _rev(vault, WAITING + p) is None for p in made}
    if why:
        why = f"waits on this machine ({why}); the next `brain sync` sends it"
    return [
        Sent(s.id, s.branch, s.action, after[s.id], "" if after[s.id] else why)
        if s.action == "proposed"
        else s
        for s in out
    ]


def open_count(vault: Path) -> int:
    """The proposals open on the remote as last fetched, and this clone's unsent ones (no
    network): what propose holds to MAX_PENDING, as the inbox is held."""
    r = remote(vault)
    there = _refs(vault, f"refs/remotes/{r.name}/{PREFIX}") if r is not None else []
    return len(there) + unsent(vault)


def unsent(vault: Path) -> int:
    """How many proposals this clone holds that the remote has not received (one git call)."""
    from brain.gitsync import unsent_proposals

    return len(unsent_proposals(vault))


def send_waiting(vault: Path, r: Remote, only: Sequence[str] = ()) -> tuple[int, str]:
    """Push this clone's unsent proposals (brain.gitsync.send_proposals, which a sync pass
    calls too)."""
    from brain.gitsync import send_proposals

    return send_proposals(vault, r.name, r.conf, only)


def open_pr(vault: Path, r: Remote | None, branch: str, title: str) -> tuple[str | None, str]:
    """Open a pull request for a sent proposal with `gh`, when it is installed and the remote is
    on GitHub: (its URL, "") or (None, why not). Nothing else depends on it."""
    gh = shutil.which("gh")
    if r is None:
        return None, "no pull request: the vault is not connected"
    if "github.com" not in r.url:
        return None, "no pull request: the remote is not on GitHub"
    if gh is None:
        return None, "no pull request: `gh` (GitHub's CLI) is not installed"
    import subprocess

    # `gh pr create --head BRANCH --base BASE --title T --body B`
    # (https://cli.github.com/manual/gh_pr_create)
    argv = [gh, "pr", "create", "--head", branch, "--base", r.branch, "--title", title]
    argv += ["--body", "Proposed with `brain propose`; approve it with `brain inbox approve`."]
    try:
        proc = subprocess.run(
            argv,
            cwd=vault,
            capture_output=True,
            stdin=subprocess.DEVNULL,
            timeout=GH_TIMEOUT,
            check=False,
            env=gitutil.no_git_env(),
        )
    except (OSError, subprocess.TimeoutExpired) as exc:
        return None, f"no pull request: gh failed ({exc})"
    if proc.returncode != 0:
        return None, f"no pull request: gh said {gitutil.complaint(proc)}"
    url = proc.stdout.decode("utf-8", "replace").strip().split("\n")[-1]
    return url, ""


# --- approving and dropping ----------------------------------------------------------------------


@dataclass(frozen=True)
class Merged:
    commit: str  # the merge commit now at the head of the remote's branch
    target: str
    text: str  # the target file as merged
    bullet: str  # the bullet as it went in (an update keeps the aliases of the one it replaced)
    replaced: str  # the bullet of its handle it replaced on the branch, "" when none


def _gone(vault: Path, r: Remote, pid: str) -> str:
    """Why the proposal's branch is no longer on the remote, in one line."""
    proc = gitutil.run(
        vault, "log", "-1", "--format=%h %an", f"--grep=^{APPROVED}: {pid}$", r.head, check=False
    )
    found = proc.stdout.decode("utf-8", "replace").strip()
    if found:
        sha, _, who = found.partition(" ")
        return f"proposal {pid} was already approved ({who}, commit {sha}): nothing merged twice"
    return f"proposal {pid} is no longer on the remote (dropped elsewhere): nothing merged"


def _before_push(vault: Path) -> None:
    """A seam for the fault tests: nothing happens here."""


def approve(vault: Path, pid: str, seen: str) -> Merged:
    """Merge proposal `pid` (its commit `seen`, as listed) into the remote's branch through the
    vault's line merge, and delete its branch, in one atomic push; BrainError, one line, when
    nothing was merged (approved or dropped elsewhere, rewritten, refused, offline)."""
    r = remote(vault)
    if r is None:
        raise BrainError("the vault is not connected", "`brain sync connect URL`, then approve")
    if _rev(vault, WAITING + pid) is not None:
        raise BrainError(
            f"proposal {pid} has not reached the remote yet: nothing merged",
            "`brain sync` sends it; approve it then",
        )
    for _ in range(PUSH_TRIES):
        failed = fetch(vault, r)
        if failed:
            raise BrainError(
                f"the remote could not be reached ({failed}): nothing merged, nothing lost",
                "approve it again when the remote is back",
            )
        now = _rev(vault, r.tracking(pid))
        if now is None:
            raise BrainError(_gone(vault, r, pid), "run `brain inbox` to see what is open")
        if now != seen:
            raise BrainError(
                f"proposal {pid} changed on the remote since it was listed: nothing merged",
                "run `brain inbox` to read it as it is now, then approve it again",
            )
        head = _rev(vault, r.head)
        if head is None:
            raise BrainError(f"the remote has no branch {r.branch} yet", "run `brain sync` once")
        merged = _merge(vault, r, pid, now, head)
        _scanned(vault, pid, merged.commit, head)
        _before_push(vault)
        leases = [
            f"--force-with-lease=refs/heads/{r.branch}:{head}",
            f"--force-with-lease=refs/heads/{PREFIX}{pid}:{now}",
        ]
        specs = [f"{merged.commit}:refs/heads/{r.branch}", f":refs/heads/{PREFIX}{pid}"]
        try:
            proc = _git(vault, r, "push", "--porcelain", "--atomic", *leases, r.name, *specs)
        except gitutil.GitTimeout as exc:
            raise BrainError(
                f"{exc.message}: the approval may or may not have reached the remote; nothing "
                "is merged twice",
                "run `brain inbox approve` again: it finds which",
            ) from None
        if proc.returncode == 0:
            with contextlib.suppress(BrainError):  # the next fetch says the same
                gitutil.run(vault, "update-ref", r.head, merged.commit)
                gitutil.run(vault, "update-ref", "-d", r.tracking(pid))
            return merged
        said = proc.stdout + proc.stderr
        if b"not support --atomic" in said:
            raise BrainError(
                "the remote does not take atomic pushes, which an approval needs to merge once: "
                "nothing merged",
                f"merge {PREFIX}{pid} there by hand (or its pull request)",
            )
        raced = (b"stale info", b"atomic", b"fetch first", b"non-fast-forward", *LOST_RACE)
        if b"remote rejected" in said and not any(s in said for s in raced):
            raise BrainError(
                f"the remote refused the approval: {gitutil.complaint(proc, first=True)}; "
                "nothing merged",
                "fix what the remote says, then approve again",
            )
        if not any(s in said for s in raced):
            raise BrainError(
                f"the push failed ({gitutil.complaint(proc)}): nothing merged, nothing lost",
                "approve it again when the remote is back",
            )
        time.sleep(0.05)  # another approval landed first: read the remote again
    raise BrainError(
        "the remote's branch kept moving while this approval was pushed: nothing merged",
        "approve it again",
    )


def _scanned(vault: Path, pid: str, merge: str, head: str) -> None:
    """The merge and the proposal's commit, scanned for credentials before the merge is pushed
    (the scan `brain sync` runs on what it sends): a proposal's branch is on the remote already,
    but its content reaches every clone only through the vault's branch."""
    from brain import secrets

    scan = secrets.scan_commits(vault, merge, [head])
    if scan.first_bad is not None:
        f = scan.findings[0]
        raise BrainError(
            f"proposal {pid} holds what looks like a credential ({f.rule}: {f.masked} in "
            f"{f.path}): nothing merged",
            f"drop it (`brain inbox drop {PREFIX}{pid}`)",
        )


def _merge(vault: Path, r: Remote, pid: str, proposal: str, head: str) -> Merged:
    """The merge commit of `proposal` into `head`: its core file merged line by line
    (brain.merge, the driver `brain sync` uses) from the proposal's parent."""
    from brain import merge
    from brain.gitsync import _signature

    repo = gitutil.open_git(_git_dir(vault))
    p = _parse(repo, pid, proposal, True, head)
    if p.problem:
        raise BrainError(f"proposal {pid} cannot be approved: {p.problem}", "drop it")
    theirs = gitutil.commit_of(repo, proposal)
    ours = gitutil.commit_of(repo, head)
    base = theirs.parents[0]
    now = _text(repo, ours.tree, p.target)
    same = _same_handle(now, p.markdown)
    bullet = p.markdown
    if same is not None:
        # the branch has a bullet of its handle now (approved meanwhile, or made an update of):
        # replaced in place, as the inbox says (`updates`) and as propose would build it today;
        # merging would keep both, two bullets of one handle that lint refuses
        from brain.vault import keep_aliases

        lines = now.split("\n")
        bullet = keep_aliases(p.markdown, same)
        lines[lines.index(same)] = bullet
        result = merge.Merged(_bytes("\n".join(lines)), ())
    else:
        older, theirs_text = (_text(repo, c.tree, p.target) for c in (base, theirs))
        data = [_bytes(older), _bytes(now), _bytes(theirs_text)]
        result = merge.merge(*data) if data[1] != data[0] else merge.Merged(data[2], ())
    idx = gitutil.new_index()
    idx.read_tree(ours.tree)
    idx.add(gitutil.index_entry(p.target, repo.create_blob(result.data), BLOB))
    sig = _signature(r.conf)
    message = f"brain inbox: approved {p.markdown}\n\n{APPROVED}: {pid}\n"
    parents = [ours.id, theirs.id]
    committer = _signature(r.conf, "COMMITTER")
    sha = repo.create_commit(None, sig, committer, message, idx.write_tree(repo), parents)
    text = result.data.decode("utf-8", "replace")
    return Merged(str(sha), p.target, text, bullet, same or "")


def _same_handle(text: str, bullet: str) -> str | None:
    """The first bullet of `text` other than `bullet` whose handle is `bullet`'s, else None."""
    key = _handle(bullet)
    return next((ln for ln in text.split("\n") if ln != bullet and _handle(ln) == key), None)


def drop(vault: Path, pid: str, seen: str) -> str:
    """Delete proposal `pid`'s branch (leased on `seen`), or this clone's unsent proposal; what
    happened in one line. BrainError when nothing was dropped."""
    waiting = _rev(vault, WAITING + pid)
    if waiting is not None:
        gitutil.run(vault, "update-ref", "-d", WAITING + pid, waiting)
        return "dropped here before it was sent"
    r = remote(vault)
    if r is None:
        raise BrainError("the vault is not connected", "`brain sync connect URL`, then drop")
    lease = f"--force-with-lease=refs/heads/{PREFIX}{pid}:{seen}"
    try:
        proc = _git(vault, r, "push", "--porcelain", lease, r.name, f":refs/heads/{PREFIX}{pid}")
    except gitutil.GitTimeout as exc:
        raise BrainError(f"{exc.message}: not dropped", "drop it again") from None
    if proc.returncode == 0:
        gitutil.run(vault, "update-ref", "-d", r.tracking(pid), check=False)
        return f"its branch {PREFIX}{pid} deleted on the remote"
    if fetch(vault, r):
        raise BrainError(
            f"the remote could not be reached ({gitutil.complaint(proc)}): not dropped",
            "drop it again when the remote is back",
        )
    if _rev(vault, r.tracking(pid)) is None:
        raise BrainError(_gone(vault, r, pid), "run `brain inbox` to see what is open")
    raise BrainError(
        f"proposal {pid} changed on the remote since it was listed: not dropped",
        "run `brain inbox` to read it as it is now",
    )
