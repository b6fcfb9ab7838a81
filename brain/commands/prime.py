"""`brain prime`: what the vault knows about the prompt an agent was just given.

Claude Code runs it on every prompt (the UserPromptSubmit hook) and puts what it prints beside
the prompt. So it reads the prompt as a sentence (pasted blocks, code and logs do not drive the
query; chat words carry nothing), retrieves as `find` does without ever loading a model itself
(the warm worker's neighbours or keywords alone), speaks only when a hit stands out on its own
evidence (search.PRIME: find's rule, stricter), never serves a note's paragraph that a newer
bullet corrects (the bullet instead), and never gives a session what it was already given.
Being quick and out of the way (exit 0, a deadline) is brain/cli.py's part.
"""

from __future__ import annotations

import re
import sqlite3
from collections.abc import Callable
from dataclasses import dataclass
from pathlib import Path

from brain import drift, index, search, superseded, usage
from brain.vocab import CHAT_STOPWORDS

DEFAULT_BUDGET = 1200  # tokens (bytes / 4) of what the hook prints
MAX_SERVED = 3  # stand-outs served per prompt at most
CANDIDATES = 10  # the top of the ranking that is judged
SENTENCE_WORDS = 60  # a long prompt is read by its start: its task is said there
HINT_WORDS = 2  # topic words the vault holds, at least, for a prompt to get the hint
LOG_RUN = 3  # this many log-like lines in a row are a pasted log, not the prompt's words

# What stands out is search.PRIME's call: find's stand-out rule, stricter (see brain/search.py).
# When one stands out, the BULLETS best-ranked bullets are served with it (chosen with the rule by
# tools/bench_prime.py --calibrate).
BULLETS = 2


_PASTED = re.compile(
    r"<pasted_content\b[^>]*?/>|<pasted_content\b.*?(?:</pasted_content\s*>|\Z)", re.S | re.I
)
_PLACEHOLDER = re.compile(r"\[(?:Pasted text|Image) #\d+[^\]]*\]", re.I)
_FENCE = re.compile(r"^[ \t]*(`{3,}|~{3,}).*?(?:^[ \t]*\1[^\n]*$|\Z)", re.S | re.M)
_LOG_LINE = re.compile(
    r"""^\s*(?:
    Traceback\ \(most\ recent
    | File\ "[^"]*",\ line\ \d+
    | at\ [\w$.<>/]+\(
    | \d{4}-\d\d-\d\d[T\ ]\d\d:\d\d
    | \[?\d\d:\d\d:\d\d
    | \[?(?:DEBUG|INFO|WARN|WARNING|ERROR|FATAL|TRACE|CRITICAL|PANIC)\]?[\s:]
    | goroutine\ \d+
    | \.\.\.\ \d+\ more
    | [$#>]\ \S
    | [\^~]{3,}\s*$
    | [|+=-]{3,}
    | \S+\.(?:py|go|js|ts|java|rs|rb):\d+
    )""",
    re.X,
)
_ERROR_LINE = re.compile(r"^\s*[\w.]*(?:Error|Exception|error|panic)\b:?\s+\S")
_FRAME = re.compile(r'^\s*File "[^"]*", line \d+')  # a Python frame: its source line follows


def sentence(prompt: str) -> str:
    """The prompt as words a person said: pasted blocks, code fences and logs left out (a log's
    last error line is kept: it names the symptom), at most SENTENCE_WORDS words."""
    text = _PASTED.sub(" ", prompt)
    text = _PLACEHOLDER.sub(" ", text)
    text = _FENCE.sub(" ", text)
    kept: list[str] = []
    run: list[str] = []

    def end_run() -> None:
        if len(run) >= LOG_RUN:
            errors = [line for line in run if _ERROR_LINE.match(line)]
            kept.extend(errors[-1:])
        else:
            kept.extend(run)
        run.clear()

    for line in text.splitlines():
        if _LOG_LINE.match(line) or (run and (_ERROR_LINE.match(line) or _FRAME.match(run[-1]))):
            run.append(line)
            continue
        end_run()
        kept.append(line)
    end_run()
    return " ".join(" ".join(kept).split()[:SENTENCE_WORDS])


def topic_terms(text: str) -> list[str]:
    """The words of `text` that could name a topic: no stopwords, no chat words."""
    return list(
        dict.fromkeys(t for t in search.terms_of(text) if t not in CHAT_STOPWORDS and _topical(t))
    )


def _topical(term: str) -> bool:
    """A one-letter word or a number under 100 (a count, a time, a step) names no topic; an
    error code or a year does (`504`, `2026`)."""
    return len(term) > 1 and not (term.isdigit() and len(term) < 3)


@dataclass(frozen=True)
class Candidate:
    """A hit near the top of the ranking with the evidence that decides whether it stands out."""

    hit: search.Hit
    evidence: search.Evidence


@dataclass(frozen=True)
class PrimeResult:
    query: str  # the words searched ("" when the prompt had none worth searching)
    mode: str  # "hybrid" (the warm worker's vectors too), "keyword", or "" (nothing searched)
    hits: tuple[search.Hit, ...]  # what stands out and the session was not given yet, best first
    repeated: int  # stand-outs left out because this session was given them already
    hint: bool  # say once that `brain find` and `brain recall` exist (nothing served yet)


Neighbours = Callable[[sqlite3.Connection, str], search.Near | None]


def choose(
    judged: list[Candidate], rule: search.Rule = search.PRIME, bullets: int = BULLETS
) -> list[search.Hit]:
    """What is served, at most MAX_SERVED: nothing unless some candidate stands out under `rule`;
    then the `bullets` best-ranked bullets (the fact as settled, where a note's paragraph tells its
    story) and the stand-outs, bullets before paragraphs, each kind in ranking order."""
    standing = sorted((c for c in judged if rule.stands_out(c.evidence)), key=_paragraph)
    if not standing:
        return []
    best = [c for c in judged if not _paragraph(c)][:bullets]
    hits = list(dict.fromkeys(c.hit for c in [*best, *standing]))
    return hits[:MAX_SERVED]


def _paragraph(c: Candidate) -> bool:
    return c.hit.kind != "bullet"


@dataclass(frozen=True)
class Judged:
    mode: str  # "hybrid", "keyword", or "" (nothing to search)
    candidates: list[Candidate]  # the top CANDIDATES hits with their signals, best first
    known: int  # how many of the topic words some unit of the vault holds
    terms: int  # how many topic words there are


def candidates(conn: sqlite3.Connection, said: str, neighbours: Neighbours | None) -> Judged:
    """The top of the ranking for the sentence `said`, with the signals: its topic words drive
    the keyword half, the whole sentence the vector half (the model reads sentences)."""
    text = " ".join(topic_terms(said))
    parsed = search.read_query(conn, text)
    if not text or not parsed.terms:
        return Judged("", [], 0, 0)
    ranked = search.keyword_rank(conn, parsed)
    near = neighbours(conn, said) if neighbours is not None else None
    vector = None if near is None else near.hits
    if vector is None:
        mode, hits = "keyword", ranked.hits
    else:
        mode, hits = "hybrid", search.hybrid_rank(conn, parsed, vector, ranked)
    judge = search.Judge(parsed, ranked, vector, None if near is None else near.general)
    typical = judge.typical(hits)
    out = [Candidate(h, judge.evidence(h, typical)) for h in hits[:CANDIDATES]]
    return Judged(mode, out, round(ranked.known * len(parsed.groups)), len(parsed.groups))


def prime(
    vault: Path, prompt: str, *, session: str = "", neighbours: Neighbours | None = None
) -> PrimeResult:
    """What stands out in `vault` for `prompt`, less what `session` was given already.

    `neighbours` gives the vector half (None: keywords only); it must never load a model.
    """
    said = sentence(prompt)
    text = " ".join(topic_terms(said))
    if not text:
        return PrimeResult("", "", (), 0, hint=False)
    conn = index.open_index(vault)
    try:
        judged = candidates(conn, said, neighbours)
        standing = choose(judged.candidates)
        standing = drift.mark(conn, superseded.current(conn, standing, MAX_SERVED))
    finally:
        conn.close()
    given = usage.so_far(session, vault)
    fresh = [h for h in standing if usage.unit_key(h.path, h.line, h.handle) not in given.units]
    repeated = len(standing) - len(fresh)
    # The hint is for a prompt mostly in the vault's own words (two at least, and PRIME's
    # `telling` of them met in one unit: a general question's words are scattered over
    # unrelated ones) that found nothing standing out: the agent may search deeper. Never for
    # chat or another topic, and once per session.
    words = judged.known >= HINT_WORDS and judged.known >= search.KNOWN * judged.terms
    words = words and any(search.PRIME.tells(c.evidence) for c in judged.candidates)
    asked = words and not standing
    hint = bool(session) and asked and not given.served and not given.hinted
    return PrimeResult(_echoed(said, text), judged.mode, tuple(fresh), repeated, hint)


def _echoed(said: str, terms: str) -> str:
    """The words searched as `--json` and the usage log show them: those of the prompt with any
    credential in it masked first (folded into words, a pasted token is no longer one that the
    masking of `brain log` or the ledger would know)."""
    from brain.text import mask_secrets

    masked = mask_secrets(said)
    return terms if masked == said else " ".join(topic_terms(masked))
