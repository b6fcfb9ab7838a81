"""The presenters of the commands that tend the vault and read the usage log: doctor, verify,
learn, tend, review, log, ledger (text for a person; JSON is each result as `present.data`
builds it)."""

from __future__ import annotations

from typing import TYPE_CHECKING

from brain.present import Answer, json_text, rich_text
from brain.text import noun, plural

if TYPE_CHECKING:
    from brain.commands.doctor import DoctorResult
    from brain.commands.learn import LearnResult
    from brain.commands.ledger import Ledger
    from brain.commands.log import LogResult
    from brain.commands.review import ReviewResult
    from brain.commands.tend import TendResult
    from brain.commands.verify import VerifyResult

SHOWN_SESSIONS = 10  # sessions the text lists; the JSON has all of them
CHART_DAYS = 30
BAR_WIDTH = 40


def _n(value: int) -> str:
    return f"{value:,}"


SHOWN = 10
_MARK = {"ok": "ok  ", "warn": "warn", "fail": "FAIL"}
# doctor's advisories `brain tend` acts on: a title and what to do, for `brain doctor` and the
# desk's Health page alike
ADVICE = {
    "failed_claims": (
        "Bullets whose claims failed here",
        "`brain verify HANDLE`; fix or drop them",
    ),
    "duplicate_handles": (
        "Handles that name several bullets",
        "`brain tend` proposes keeping the newest",
    ),
    "corrected": ("Bullets served just before a person corrected the agent", "check they hold"),
}


def verify_text(result: VerifyResult, *, shown: int = 50) -> str:
    from brain.commands.verify import UNKNOWN

    lines = []
    for c in result.bullets[:shown]:
        unchecked = sum(x.status == UNKNOWN for x in c.claims)
        some = f" ({unchecked} of {plural(len(c.claims), 'claim')} cannot be checked here)"
        verdict = c.verdict + (some if unchecked and c.verdict != "unknown" else "")
        lines.append(f"{c.path}:{c.line} **{c.handle}** ({c.date}): {verdict}")
        for x in c.claims:
            lines.append(f"    {x.status:<12} {x.kind:<10} {x.text}  ({x.detail})")
    if len(result.bullets) > shown:
        lines.append(f"… and {len(result.bullets) - shown} more (--json lists them all)")
    # what this machine could check, apart from what it only read: a bullet whose every claim
    # cannot be checked here is no bullet "making a claim this machine reads" in the count
    unknown = sum(c.verdict == "unknown" for c in result.bullets)
    checkable = result.with_claims - unknown
    makes = noun(checkable, "makes", "make")
    summary = (
        f"{checkable} of {plural(result.checked, 'bullet')} {makes} a claim this machine can "
        f"check: {result.passed_count} passed, {result.failed_count} with a failed claim"
    )
    if unknown:
        summary += f"; {unknown} more {noun(unknown, 'makes', 'make')} only claims it cannot check"
    lines.append(summary)
    if result.dated:
        lines.append(f"dated today: {', '.join(result.dated)} (not committed)")
    return "\n".join(lines)


def log_text(result: LogResult) -> str:
    scope = f" since {result.since_at}" if result.since_at else ""
    if not result.misses:
        return (
            f"No misses{scope}: something stood out in every one of "
            f"{plural(result.lookups, 'logged find')}."
            if result.lookups
            else f"No finds logged{scope} yet for {result.vault}."
        )
    distinct = len(result.open) + len(result.answered)
    lines = [
        f"Nothing stood out in {result.misses} of {plural(result.lookups, 'find')}{scope} "
        f"({plural(distinct, 'distinct query', 'distinct queries')}); {len(result.answered)} "
        f"answered since by an edit, {len(result.open)} still open:"
    ]
    for m in result.open:
        lines.append(f"  {m.count:>4}×  {m.last_date}  {m.query!r}  ({', '.join(m.callers)})")
    if result.callers:
        asking = ", ".join(f"{c.caller} {c.misses}" for c in result.callers)
        lines.append(f"Who asks most: {asking}")
    if result.open:
        lines.append(
            "Answer them with bullets in the core files or rows in AI/synonyms.tsv; "
            "`brain log` drops each once `brain find` answers it."
        )
    return "\n".join(lines)


def review_text(result: ReviewResult) -> str:
    if result.mode == "after" and result.proposals_mode == "team":
        what = (
            "but this vault's proposals go to the shared remote (`proposals: team`), where they "
            "answer finds only once approved"
        )
    elif result.mode == "after":
        what = (
            f"proposals answer finds at once, marked unreviewed ({result.unreviewed_count} now), "
            "until approved or dropped"
        )
    else:
        what = "a proposal answers nothing until a person approves it"
    verb = "now" if result.mode_changed else "is"
    tail = f"; commit {result.path} so every machine agrees" if result.mode_changed else ""
    if result.set_by != result.path:  # the environment decides here, whatever the file says
        changed = (
            f"; {result.path} changed for the others: commit it" if result.mode_changed else ""
        )
        return f"Review mode is `{result.mode}` on this machine (BRAIN_REVIEW): {what}{changed}."
    return f"Review mode {verb} `{result.mode}`: {what}{tail}."


def ledger_text(result: Ledger, *, chart: bool) -> str:
    """The ledger for a person: rich markup with a per-day chart when `chart`, else plain lines."""
    from rich.markup import escape

    def plain(s: str) -> str:
        return escape(s) if chart else s

    scope = []
    if result.since_at:
        scope.append(f"since {result.since_at}")
    if result.caller:
        scope.append(f"caller {result.caller}")
    head = f"Ledger of {result.vault}" + (f" ({', '.join(scope)})" if scope else "")
    if not result.lookups:
        return plain(f"{head}\nNo lookups logged yet: `brain find` logs every lookup it answers.")
    whole = result.lookups * result.core_tokens
    share = f" ({100 * result.saved / whole:.1f} %)" if whole > 0 else ""
    lines = [
        plain(head),
        plain(
            f"{_n(result.lookups)} {noun(result.lookups, 'lookup')} returned {_n(result.tokens)} "
            f"{noun(result.tokens, 'token')}; reading the core files whole each time "
            f"({_n(result.core_tokens)} {noun(result.core_tokens, 'token')} a read) would have "
            f"cost {_n(whole)}: {_n(result.saved)} saved{share}."
        ),
        "",
        "By caller" if not chart else "[bold]By caller[/bold]",
    ]
    width = max(len(c.caller) for c in result.callers)
    for c in result.callers:
        lines.append(
            plain(
                f"  {c.caller:<{width}}  {_n(c.lookups):>9} {noun(c.lookups, 'lookup'):<7}"
                f"  {_n(c.tokens):>11} {noun(c.tokens, 'token'):<6}  {_n(c.saved):>13} saved"
            )
        )
    shown = result.sessions[:SHOWN_SESSIONS]
    more = (
        f" (latest {len(shown)} of {len(result.sessions)})"
        if len(shown) < len(result.sessions)
        else ""
    )
    lines += ["", ("[bold]Sessions[/bold]" if chart else "Sessions") + more]
    # ids and callers whole (an agent's session id is what `claude --resume` takes; cut at 24
    # it was no use), each column as wide as its longest; saved as in the tables around it
    names = [s.session or "(no session)" for s in shown]
    name_w = max(map(len, names), default=0)
    caller_w = max((len(s.caller) for s in shown), default=0)
    for s, name in zip(shown, names, strict=True):
        lines.append(
            plain(
                f"  {s.last_at}  {name:<{name_w}}  {s.caller:<{caller_w}}  {_n(s.lookups):>7} "
                f"{noun(s.lookups, 'lookup'):<7}  {_n(s.tokens):>9} {noun(s.tokens, 'token'):<6}"
                f"  {_n(s.saved):>11} saved"
            )
        )
    lines += ["", "[bold]By day[/bold]" if chart else "By day"]
    days = result.days[-CHART_DAYS:] if chart else result.days
    top = max((d.tokens for d in days), default=0) or 1
    for d in days:
        figures = (
            f"{_n(d.lookups):>7} {noun(d.lookups, 'lookup'):<7}  {_n(d.tokens):>9} "
            f"{noun(d.tokens, 'token'):<6}  {_n(d.saved):>11} saved"
        )
        if chart:
            bar = "█" * max(1 if d.tokens else 0, round(BAR_WIDTH * d.tokens / top))
            lines.append(f"  {d.date}  [cyan]{bar:<{BAR_WIDTH}}[/cyan]  {escape(figures)}")
        else:
            lines.append(f"  {d.date}  {figures}")
    return "\n".join(lines)


def doctor_text(result: DoctorResult) -> str:
    """The checks, then each advisory list. Every line an advisory makes is escaped whole
    (brain.text.printable): a vault file's name, in a path or a locator, is printed as it is
    named, and a newline or ESC in it must not forge a line or drive the terminal."""
    from brain.commands.advisories import cite
    from brain.text import printable

    lines = []
    for c in result.checks:
        line = f"{_MARK.get(c.status, c.status)}  {c.name:<13} {printable(c.detail)}"
        if c.fix:
            line += f"\n      {'':<13} fix: {printable(c.fix)}"
        lines.append(line)
    advice: list[str] = []
    if result.frequent:
        advice += [
            "",
            "Bullets lookups keep returning (put them in the project's agent file or a gate):",
        ]
        for f in result.frequent[:SHOWN]:
            asked = ", ".join(repr(q) for q in f.queries)
            advice.append(
                f"  {f.count:>5}×  {cite(f.path, f.handle)}  {f.path}:{f.line}  ({asked})"
            )
    if result.older_notes:
        advice += [
            "",
            "Older notes that name what a newer bullet settled (update or cite the bullet):",
        ]
        for n in result.older_notes[:SHOWN]:
            advice.append(
                f"  {n.path}:{n.line} ({n.date}) says {n.phrase!r} {n.mentions}× — "
                f"{cite(n.bullet_locator.split(':')[0], n.handle)} {n.bullet_locator}"
                f" ({n.bullet_date})"
            )
    if result.superseded:
        advice += [
            "",
            "Notes older than a bullet that says otherwise (update the note, or mark it as history"
            " by citing the bullet in it, e.g. **handle**):",
        ]
        for note in result.superseded[:SHOWN]:
            newer = "; ".join(f"{b.handle} {b.locator} ({b.date})" for b in note.bullets)
            advice.append(
                f"  {note.path}:{note.line} ({note.date}) {plural(note.paragraphs, 'paragraph')}"
                f" — older than {newer}"
            )
    if result.duplicates:
        advice += ["", "Bullets that may say the same thing (merge them, or make one an alias):"]
        for d in result.duplicates[:SHOWN]:
            pair = f"{d.handles[0]} ~ {d.handles[1]}"
            advice.append(f"  {d.score:.2f}  {pair}  ({d.locators[0]}, {d.locators[1]})")
    advice += _doctor_tend_text(result)
    lines += [printable(line) for line in advice]
    failed = sum(c.status == "fail" for c in result.checks)
    broken = f"{plural(failed, 'check')} broken; run the fix under {noun(failed, 'it', 'each')}"
    warned = sum(c.status == "warn" for c in result.checks)
    # "All checks pass." under a warning told a person there was nothing to do
    warns = f"No check fails; {plural(warned, 'check')} {noun(warned, 'warns', 'warn')} (above)."
    lines += ["", broken if failed else warns if warned else "All checks pass."]
    return "\n".join(lines)


def _doctor_tend_text(result: DoctorResult) -> list[str]:
    """The advisories `brain tend` acts on, one line each (doctor_text escapes them)."""
    lines: list[str] = []
    if result.failed_claims:
        lines += ["", "{} ({}):".format(*ADVICE["failed_claims"])]
        for f in result.failed_claims[:SHOWN]:
            lines.append(
                f"  {f.path}:{f.line} **{f.handle}** ({f.date}): {len(f.failures)} of "
                f"{f.claim_count}"
                f" failed: {'; '.join(f.failures)}"
            )
    if result.duplicate_handles:
        lines += ["", "{} ({}):".format(*ADVICE["duplicate_handles"])]
        for g in result.duplicate_handles[:SHOWN]:
            at = ", ".join(f"{b} ({d})" for b, d in zip(g.locators, g.dates, strict=True))
            lines.append(f"  **{g.handle}**: {at}")
    if result.corrected:
        lines += ["", "{} ({}):".format(*ADVICE["corrected"])]
        for c in result.corrected[:SHOWN]:
            said = "; ".join(repr(s) for s in c.said)
            lines.append(
                f"  {c.path}:{c.line} **{c.handle}**: {c.corrections}× in "
                f"{plural(c.session_count, 'session')}: {said}"
            )
    return lines


def tend_text(result: TendResult) -> str:
    if not result.ran:
        if result.stopped:  # off (BRAIN_NO_TEND)
            return f"Not swept: {result.stopped}."
        return "The daily sweep already ran today (or another sweep is running)."
    lines = []
    done = "would apply" if result.dry_run else "applied"
    for a in result.applied:
        lines.append(f"{done}: alias for **{a.handle}** {a.detail} ({a.path}:{a.line})")
    verb = "would propose" if result.dry_run else "proposed"
    for p in result.proposed:
        lines.append(f"{verb}: {p.op}: {p.summary}\n    why: {p.why}")
    if result.waiting_count:
        waiting = plural(result.waiting_count, "item")
        lines.append(f"{waiting} already in the inbox or proposed before")
    if result.stopped:
        lines.append(f"stopped early: {result.stopped}")
    n = len(result.proposed)
    tail = " (dry run: nothing written)" if result.dry_run else ""
    review = f"; review {noun(n, 'it', 'them')} with `brain inbox`" if n else ""
    lines.append(
        f"{plural(result.checked, 'bullet')} swept in {result.ms} ms: "
        f"{len(result.applied)} {done}, {n} {verb}{tail}" + ("" if result.dry_run else review)
    )
    return "\n".join(lines)


def learn_text(result: LearnResult, *, shown: int = 20) -> str:
    lines = []
    if result.proposed:
        lines.append("Aliases people search with (the bullet was reached by its body, not a name):")
        for p in result.proposed[:shown]:
            asked = ", ".join(repr(q) for q in p.queries)
            lines.append(
                f"  {p.path}:{p.line} **{p.handle}** + {p.alias!r}  "
                f"({plural(p.lookups, 'lookup')}, {plural(p.session_count, 'session')}: {asked})"
            )
    if result.unused:
        lines.append(f"Aliases no logged query used ({len(result.unused)}):")
        for u in result.unused[:shown]:
            lines.append(f"  {u.path}:{u.line} **{u.handle}**: {u.alias!r}")
        if len(result.unused) > shown:
            lines.append(f"  … and {len(result.unused) - shown} more (--json lists them all)")
    if result.applied:
        lines.append(f"Written: {', '.join(result.applied)} (not committed)")
    elif result.proposed:
        lines.append("`brain learn --apply` writes them (a line edit each).")
    if result.stopped:
        lines.append(f"Stopped early: {result.stopped}.")
    asked = plural(result.query_count, "query", "queries")
    lines.append(f"{plural(result.lookups, 'lookup')} read, {asked} asked again.")
    return "\n".join(lines)


def doctor(result: DoctorResult, *, as_json: bool = False) -> Answer:
    """Every check and advisory; exit 1 when a check is broken."""
    return Answer(json_text(result) if as_json else doctor_text(result), code=0 if result.ok else 1)


def verify(result: VerifyResult, *, as_json: bool = False) -> Answer:
    """Each bullet's claims and verdict; exit 1 when a claim failed."""
    text = json_text(result) if as_json else verify_text(result)
    return Answer(text, code=1 if result.failed_count else 0)


def learn(result: LearnResult, *, as_json: bool = False) -> Answer:
    return Answer(json_text(result) if as_json else learn_text(result))


def tend(result: TendResult, *, as_json: bool = False) -> Answer:
    return Answer(json_text(result) if as_json else tend_text(result))


def review(result: ReviewResult, *, as_json: bool = False) -> Answer:
    return Answer(json_text(result) if as_json else review_text(result))


def log(result: LogResult, *, as_json: bool = False) -> Answer:
    return Answer(json_text(result) if as_json else log_text(result))


def ledger(result: Ledger, *, as_json: bool = False, chart: bool = False) -> Answer:
    """The ledger: JSON, the rich view with a per-day chart at a terminal, else plain lines."""
    if as_json:
        return Answer(json_text(result))
    if chart:
        return Answer(rich_text(ledger_text(result, chart=True)))
    return Answer(ledger_text(result, chart=False))
