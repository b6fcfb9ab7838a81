"""Lessons in transcripts: the moments a person corrected an agent, and commands that failed and
then worked another way.

A **correction** is a user turn right after an agent turn that rejects or redirects it ("no, use
X", "that's wrong", "don't", "instead", and the same in German, Spanish and French). Precision
matters more than recall (a lesson nobody would keep costs a person's time), so a turn counts
only on a clear signal near its start, and the look-alikes are ruled out first: courtesies ("no
problem", "don't worry", "keine Sorge", "no te preocupes", "pas de souci"), a plain "no" that
answers the agent's question, a person saying what they will do ("instead of waiting I'll..."),
and pasted logs.

A **retry** is a shell command that failed followed, within RETRY_TURNS turns and before any file
was written, by a near one (brain.recall.past.near) that succeeded. Not a retry: the identical
command run again (the fix was elsewhere), one pointed at other files, an unrelated command, and
commands that only look (grep exits 1 when it finds nothing).

Measured on testdata/transcripts/history (tools/eval_history.py): see docs/commands.md.
"""

from __future__ import annotations

import re
import sqlite3
from dataclasses import dataclass

from brain.recall import past
from brain.recall.store import SPAN
from brain.vocab import fold, fold_map

RETRY_TURNS = 3  # a retry lies at most this many turns after the failure
RETRY_CALLS = 12  # ... and among the next this many calls (commands and files written)
OPENING = 300  # characters of a user turn read for a correction
LESSON_CHARS = 200

# -- corrections -----------------------------------------------------------------------------


# Typographic quotes, dashes and spaces made plain (one character for one, so `vocab.fold_map`'s
# indexes still point into the text), for patterns written with `'`, `-` and ` `.
_PLAIN = str.maketrans({"\u2019": "'", "\u2018": "'", "\u2014": "-", "\u2013": "-", "\u00a0": " "})


# Not corrections, whatever follows: courtesies and reassurance.
_COURTESY = re.compile(
    r"^\W*(?:"
    r"no (?:problem|prob|worries|worry|rush|biggie|need to (?:apologi[sz]e|worry|be sorry))"
    r"|not a problem|nothing to worry|never ?mind\W*$|no,? thanks?\W*$|nope\W*$|no\W*$"
    r"|(?:don'?t|do not) (?:worry|apologi[sz]e|be sorry|stress|sweat)"
    r"|kein (?:problem|stress|ding)|keine (?:sorge|ursache|angst)|macht nichts|nicht schlimm"
    r"|passt schon|nein,? danke\W*$|nein\W*$|alles gut"
    r"|no (?:pasa nada|hay problema|te preocupes|importa|hace falta disculpar)|de nada"
    r"|tranquilo|no,? gracias\W*$"
    r"|pas de (?:probleme|souci|soucis)|aucun (?:probleme|souci)|ne t'inquiete pas|t'inquiete"
    r"|pas grave|de rien|non,? merci\W*$|non\W*$"
    r")"
)
# An opening that rejects what came before; a bare no/nein/non needs punctuation after it
# ("No, use X"), or it is a determiner ("No tests ran", "No sé").
_OPENER = re.compile(
    r"^\W*(?:(?:no|nope|nah|nein|non)\s*[,.!:;\-]+"
    r"|(?:wrong|incorrect|not quite|not like that|not that|not yet|falsch|so nicht|noch nicht"
    r"|nicht so|incorrecto|todavia no|aun no|faux|pas comme (?:ca|cela)|pas encore)"
    r"\s*(?:[,.!:;\-]+|\s))\s*(?P<rest>\S.*)",
    re.DOTALL,
)
_PAUSE = re.compile(
    r"^\W*(?:wait|hold on|hang on|stop|actually|moment|warte|stopp|halt|espera|para|attends"
    r"|arrete)\s*[,.!:;\-]+\s*(?P<rest>\S.*)",
    re.DOTALL,
)
# Clear signals anywhere in the opening, each with words it cannot match without: a pattern
# runs only on a turn holding one of them (one alternation of them all costs a millisecond a turn).
_SIGNALS: list[tuple[tuple[str, ...], str]] = [
    # English
    (
        ("wrong", "incorrect", "not right", "not correct", "not what i", "backwards"),
        r"\b(?:that'?s|that is|this is|it'?s|it is|you'?re|you are) (?:wrong|incorrect"
        r"|not right|not correct|not what i|the wrong|backwards)",
    ),
    (("not what i",), r"\bnot what i (?:asked|wanted|meant|said)"),
    (("you ",), r"\byou (?:broke|deleted|removed|overwrote|ignored|misread|misunderstood)\b"),
    (("why ",), r"\bwhy (?:did|would) you\b"),
    (
        ("i said", "i told", "i asked", "i already"),
        r"\bi (?:said|told you|asked you|already said)\b",
    ),
    # an imperative "don't": at the start of a clause, not after a subject ("I don't think")
    (
        ("don", "do not", "never"),
        r"(?:^|[.!?;,:]\s*|\b(?:please|just|and|but|so|also|then)\s+)(?:don'?t|do not|never)\s+"
        r"(?!worry|forget|mind|know|think|understand|see|care|bother|apologi|be sorry|stress"
        r"|sweat|get me wrong|hesitate|feel)\w",
    ),
    (("wrong", "incorrect", "not right"), r"\b(?:is|was|are|were) (?:wrong|incorrect|not right)\b"),
    (("should be",), r"\bshould be \S+(?: \S+){0,3},? not\b"),
    (("instead",), r"\buse \S+(?: \S+){0,3} instead\b"),
    (("instead",), r"\binstead,? (?:use|run|call|put|do|try|keep|make|add|write)\b"),
    (("instead of",), r"(?<!i will )(?<!i'll )\binstead of\b"),
    (("revert", "undo", "roll back"), r"\b(?:revert|undo|roll back) (?:that|this|it|the|your)\b"),
    (("we ",), r"\bwe (?:always|never|don'?t) (?:use|run|do|put|commit|push)\b"),
    (("should ",), r"\bshould (?:have been|be using|have used)\b"),
    # German
    (
        ("falsch", "nicht"),
        r"\b(?:das ist|das war|ist) (?:falsch|nicht richtig|nicht korrekt|nicht das)",
    ),
    (("stattdessen",), r"\bstattdessen\b"),
    (("bitte nicht",), r"\bbitte nicht\b"),
    (
        ("lieber", "stattdessen", "doch"),
        r"\b(?:nimm|verwende|benutze|nutze) (?:lieber|stattdessen|doch)\b",
    ),
    (("mach ",), r"\bmach (?:das|es) (?:ruckgangig|nicht)\b"),
    (("sondern",), r"\bnicht \S+(?: \S+){0,3},? sondern\b"),
    (("warum hast du",), r"\bwarum hast du\b"),
    (("gesagt", "geschrieben"), r"\bich (?:habe|hab) (?:doch |dir )?(?:gesagt|geschrieben)\b"),
    # Spanish
    (("esta mal", "no es"), r"\b(?:eso|esto) (?:esta mal|no es (?:correcto|lo que))"),
    (("esta mal",), r"\besta mal\b"),
    (("lugar de", "vez de"), r"\ben (?:lugar|vez) de\b"),
    (
        ("no ",),
        r"\bno (?:uses|hagas|toques|borres|cambies|ejecutes|pongas|anadas|subas|instales)\b",
    ),
    (("deshaz", "revierte"), r"\b(?:deshaz|revierte)\b"),
    (("por que",), r"\bpor que (?:has|hiciste)\b"),
    (("te dije",), r"\bte dije\b"),
    # French
    (("c'est",), r"\bc'est (?:faux|pas (?:ca|bon|correct|juste|ce que))"),
    (("ce n'est pas",), r"\bce n'est pas (?:ca|bon|correct|juste|ce que)"),
    (("pas comme",), r"\bpas comme (?:ca|cela)\b"),
    (("au lieu de",), r"\bau lieu de\b"),
    (("plutot",), r"\b(?:utilise|fais|mets|prends|lance) plutot\b|\bplutot (?:que|utilise|fais)\b"),
    (
        ("pas", "jamais"),
        r"\b(?:n'|ne )(?:utilise|ajoute|efface|touche|change|fais|lance|modifie|supprime|mets)"
        r" (?:pas|jamais)\b",
    ),
    (("annule",), r"\bannule (?:ca|cela|le|la|les)\b"),
    (("pourquoi",), r"\bpourquoi (?:as-tu|tu as)\b"),
    (("dit",), r"\bje (?:t'ai|vous ai) dit\b"),
]
_SIGNAL_RES = [(frozenset(words), re.compile(pattern)) for words, pattern in _SIGNALS]
_SIGNAL_WORDS = frozenset(w for words, _ in _SIGNALS for w in words)


def _signal(text: str) -> bool:
    """Whether a folded text holds a clear signal of a correction."""
    held = {w for w in _SIGNAL_WORDS if w in text}
    return bool(held) and any(
        not held.isdisjoint(words) and rx.search(text) is not None for words, rx in _SIGNAL_RES
    )


# What follows a "no" that closes a conversation, or says nothing to learn from.
_CLOSURE = re.compile(
    r"^\W*(?:that'?s (?:all|it|fine|perfect|great)|that is (?:all|it)|all good|looks good|lgtm"
    r"|we'?re good|perfect|thanks?|thank you|nothing else|that'?s everything|good|fine|great"
    r"|i don'?t (?:think|know)|not really|not sure|maybe|hmm"
    r"|das war'?s|alles gut|danke|passt|eso es todo|todo bien|gracias|c'est tout|merci"
    r"|tout va bien|parfait|ca va)\b"
)
# A person saying what they will do next, not what the agent should have done.
_OWN_PLAN = re.compile(
    r"^\W*(?:(?:instead of \w+(?: \w+)?,? )?(?:i'?ll|i will|i'?m going to|i am going to|let me)"
    r"|(?:en (?:lugar|vez) de \w+,? )?(?:voy a|yo)|(?:au lieu de \w+,? )?(?:je vais|moi je)"
    r"|(?:statt \w+(?: \w+)?,? )?(?:ich werde|ich schaue|ich mache))\b"
)
_PASTE_LINE = re.compile(r"^(?:traceback \(most recent|\s*at \S+\(|\$ |error\[)", re.MULTILINE)


def _pasted(head: str) -> bool:
    """A log, a trace or code pasted in (its words are not the person's)."""
    if "```" in head:
        return True
    return bool(_PASTE_LINE.search(head) if "\n" in head else _PASTE_LINE.match(head))


# Thanks and praise: approval, unless a "but" follows.
_APPROVAL = re.compile(
    r"^\W*(?:thanks?|thank you|great|perfect|nice|cool|right|exactly|correct|good catch|danke"
    r"|super|genau|gracias|perfecto|merci|parfait|exactement)\b"
)
_BUT = re.compile(r"\b(?:but|however|although|aber|jedoch|pero|sin embargo|mais|cependant)\b")
# A redirect strong enough to count after the agent asked a question.
_STRONG = re.compile(
    r"\b(?:use|run|try|call|put|keep|we use|it'?s|is|are|lives?|should|always|never|instead"
    r"|verwende|nimm|benutze|ist|usa|es|utilise|est)\b"
)


def is_correction(user: str, agent: str) -> bool:
    """Whether a user turn, right after this agent turn, rejects or redirects it."""
    head = fold(user.strip()[:OPENING].translate(_PLAIN))
    if not head or (_pasted(head) and not _OPENER.match(head)):
        return False
    if _COURTESY.match(head) or _OWN_PLAN.match(head):
        return False
    if _APPROVAL.match(head) and not _BUT.search(head):
        return False
    m = _OPENER.match(head) or _PAUSE.match(head)
    if m:
        rest = m["rest"]
        if _CLOSURE.match(rest) or _COURTESY.match(rest) or _OWN_PLAN.match(rest):
            return False
        if m.re is _PAUSE or _asked(agent):  # a pause, or an answer: it needs a redirect
            return bool(_signal(rest) or _STRONG.search(rest))
        return True
    return bool(_signal(head))


def _asked(agent: str) -> bool:
    """True when the agent's turn ends with a question: a "no" then answers it."""
    tail = agent.strip()[-300:]
    last = re.split(r"(?<=[.!])\s+", tail)[-1] if tail else ""
    return "?" in last


def lesson_text(user: str) -> str:
    """What a correction teaches, in the person's words: the opening rejection dropped."""
    text = " ".join(user.split())
    folded, where = fold_map(text.translate(_PLAIN))
    m = _OPENER.match(folded) or _PAUSE.match(folded)
    if m:
        text = text[where[m.start("rest")] :]
    sentences = re.split(r"(?<=[.!?])\s+", text)
    out = sentences[0]
    if len(out) < 60 and len(sentences) > 1:
        out += " " + sentences[1]
    return past.one_line(out[:1].upper() + out[1:], LESSON_CHARS)


# -- moments ---------------------------------------------------------------------------------


@dataclass(frozen=True)
class TurnRef:
    id: str
    role: str
    at: str | None  # None: the transcript did not date it
    text: str  # one line, clipped, credentials masked


@dataclass(frozen=True)
class Moment:
    kind: str  # correction | retry
    key: str  # agent/session/turn-or-call: "the same moment" for proposals
    agent: str
    session: str
    title: str | None  # None: the session has no title
    cwd: str | None  # None: the agent keeps no folder
    at: str | None  # None: the transcript did not date it
    lesson: str  # what was learnt, one line
    turns: tuple[TurnRef, ...]  # the turns it came from
    failed: str | None  # a retry's command that failed (None for a correction)
    error: str | None  # ... and what it said (None when it said nothing)
    worked: str | None  # ... and the command that worked (None for a correction)


def _turn_ref(row: tuple[str, str, str], body: str) -> TurnRef:
    tid, role, ts = row
    return TurnRef(tid, role, ts or None, past.one_line(body))


_MACHINERY = re.compile(r"^\s*\[Request interrupted by user")


def corrections_in(conn: sqlite3.Connection, window: past.Window) -> list[Moment]:
    """The corrections among the user turns in a window, oldest first."""
    where, args = window.where("t")
    # CROSS JOIN: the window's turns first, each body by rowid (SQLite would scan FTS5 first)
    sql = (
        "SELECT t.pos, t.tid, t.agent, t.session, t.ts, t.cwd, f.body"  # noqa: S608
        f" FROM turns t CROSS JOIN fts f ON f.rowid = t.id WHERE t.role = 'user' AND {where}"
        " ORDER BY t.ts, t.id"
    )
    out = []
    for pos, tid, agent, sess, ts, cwd, body in conn.execute(sql, args):
        # what comes before can only rule a correction out: look at it for candidates alone
        if _MACHINERY.match(body) or not is_correction(body, ""):
            continue
        before = _agent_before(conn, pos, agent)
        if before is None:
            continue
        prev_row, prev_body = before
        if not is_correction(body, prev_body):
            continue
        turns = (_turn_ref(prev_row, prev_body), _turn_ref((tid, "user", ts), body))
        key = f"{agent}/{sess}/{tid}"
        title = past.title_of(conn, agent, sess)
        out.append(
            # a correction has no failed command, no error and no command that worked
            Moment(
                "correction",
                key,
                agent,
                sess,
                title,
                cwd or None,
                ts or None,
                lesson_text(body),
                turns,
                None,
                None,
                None,
            )
        )
    return out


def _agent_before(
    conn: sqlite3.Connection, pos: int, agent: str
) -> tuple[tuple[str, str, str], str] | None:
    """The agent's turn just before a user turn in its session, past interruption markers:
    (id, role, ts) and its text. An agent that only acted (a tool call, say one the person
    rejected) acted after the user's previous turn: its first command stands for its turn."""
    low = pos - pos % SPAN
    for p in range(pos - 1, max(low, pos - 3) - 1, -1):
        row = conn.execute("SELECT id, tid, role, ts FROM turns WHERE pos = ?", (p,)).fetchone()
        if row is None:
            return None
        rowid, tid, role, ts = row
        body = past.turn_body(conn, rowid)
        if role == "assistant":
            return (tid, role, ts), body
        if _MACHINERY.match(body):
            continue
        acted = conn.execute(
            "SELECT c.cid, c.ts, c.text FROM calls c JOIN turns t ON t.tid = ? AND t.agent = ?"
            " WHERE c.agent = t.agent AND c.session = t.session AND c.turn = t.tid"
            " ORDER BY c.ts, c.id LIMIT 1",
            (tid, agent),
        ).fetchone()
        return ((acted[0], "assistant", acted[1]), f"$ {acted[2]}") if acted else None
    return None


def retries_in(conn: sqlite3.Connection, window: past.Window) -> list[Moment]:
    """Failed shell commands followed closely by a near one that worked, oldest first."""
    where, args = window.where("c")
    order = " ORDER BY c.agent, c.session, c.ts, c.id"
    rows = list(past.call_rows(conn, where + order, args))
    out: list[Moment] = []
    used: set[int] = set()
    for i, failed in enumerate(rows):
        if failed.kind != "shell" or failed.ok is not False or past.looks_only(failed.text):
            continue
        # "command not found": a later command that runs the program another way teaches how
        # to run it, whether or not that run then succeeded
        missing = past.missing_program(failed.text, failed.code, failed.output)
        for j in range(i + 1, min(len(rows), i + 1 + RETRY_CALLS)):
            later = rows[j]
            if (later.agent, later.session) != (failed.agent, failed.session):
                break
            if later.kind == "write":  # something was changed: the fix may be there
                break
            if _turns_apart(failed, later) > RETRY_TURNS:
                break
            if later.rowid in used or past.looks_only(later.text):
                continue
            if missing and later.ok is not None and later.code not in (126, 127):
                if not past.mentions(later.text, missing):
                    continue
            elif later.ok is not True or not past.near(failed.text, later.text):
                continue
            if past.normal(later.text) == past.normal(failed.text):
                break  # the same command worked on a second go: nothing to learn from it
            if past.other_target(failed.text, later.text):
                break
            used.add(later.rowid)
            out.append(_retry(conn, failed, later))
            break
    return out


def _turns_apart(a: past.CallRow, b: past.CallRow) -> int:
    if a.pos is None or b.pos is None:
        return 0
    return b.pos - a.pos


def _retry(conn: sqlite3.Connection, failed: past.CallRow, worked: past.CallRow) -> Moment:
    turns = []
    for tid in dict.fromkeys(t for t in (failed.turn, worked.turn) if t):
        row = conn.execute(
            "SELECT id, tid, role, ts FROM turns WHERE tid = ? AND agent = ?", (tid, failed.agent)
        ).fetchone()
        if row:
            turns.append(_turn_ref((row[1], row[2], row[3]), past.turn_body(conn, row[0])))
    error = past.one_line(failed.output.split("\n")[-1] if failed.output else "", 120)
    bad, good = past.one_line(failed.text, 120), past.one_line(worked.text, 120)
    lesson = f"`{good}` works where `{bad}` failed" + (f" ({error})" if error else "")
    return Moment(
        "retry",
        f"{failed.agent}/{failed.session}/{worked.cid}",
        failed.agent,
        failed.session,
        past.title_of(conn, failed.agent, failed.session),
        worked.cwd or None,
        worked.ts or None,
        lesson,
        tuple(turns),
        bad,
        error or None,
        good,
    )
