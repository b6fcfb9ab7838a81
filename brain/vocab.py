"""brain's text vocabulary: what a word is, when two names are one handle, which words carry no
topic, how a word is written into an FTS5 query, what a token costs, and when a word is common.

One definition each, used by every module (a second copy drifts: two handle keys once disagreed
on whether `foo-bar` and `foo bar` are one handle). It is on the hot path of find, pack and prime,
so it imports only the standard library and compiles one small pattern.

- **fold**: lower-case with diacritics stripped, as the index's tokenizer (FTS5 `unicode61
  remove_diacritics 2`) folds: `Ödeme` -> `odeme`. `str.lower`, not `casefold`: the tokenizer maps
  one character to one, so `ß` stays `ß` on both sides.
- **word**: a run of letters and digits of folded text (`[^\\W_]+`): `c++` is `c`, `foo_bar` and
  `foo-bar` are `foo bar`, `it's` is `it s`.
- **handle key**: a handle's or alias's words joined by one space. Two names with the same key
  are one handle (`Foo-Bar`, `foo bar`, `FOO_BAR`): lint reports them as duplicates, propose and
  the inbox as an update of the core bullet, locate, verify, tend and doctor find them alike.
- **CJK run**: Chinese, Japanese and Korean are written without spaces, so a run of them is
  indexed and queried as its character pairs (cjk_split, cjk_terms).
- **stopword**: a word that names no topic (`the`, `how`, the `s` of `it's`). `STOPWORDS` is the
  plain list (find, synonyms, learn, doctor, supersede); the lists for chat build on it:
  `CHAT_STOPWORDS` for reading a prompt to an agent (`brain prime`) is a superset of it,
  `TURN_STOPWORDS` for searching transcripts (`brain recall`) too but for the letters `s` and `t`.
- **common word**: a word the units' own words (handle, aliases, body; not their neighbours)
  hold in more than COMMON of the vault's units, in a vault of COMMON_MIN_UNITS units or more. It
  hardly tells one unit from another (BM25's `idf` of it is near zero), so the vector half of a
  search leaves it out of the query (brain.search.vector_query).
- **telling terms**: a query of more than MAX_TERMS distinct terms (a pasted log, traceback or
  file) is searched for MAX_TERMS of them, the ones that tell most (telling): what it costs grows
  with its terms, and a wall of text is about its rare words, not its everyday ones.
"""

from __future__ import annotations

import functools
import math
import re
import unicodedata
from collections.abc import Callable, Container, Iterable, Sequence
from pathlib import Path

SEP = " — "  # between a bullet's fields: an em dash with a space each side
BYTES_PER_TOKEN = 4  # what a token costs in brain's budgets and ledger (bytes of UTF-8 output)
ALIAS_SEP = "\x1f"  # between a unit's aliases in the index: they may hold commas, never this


def tokens(nbytes: int) -> int:
    """Tokens `nbytes` of output cost: bytes / BYTES_PER_TOKEN, rounded up."""
    return -(-nbytes // BYTES_PER_TOKEN)


# --- words ---------------------------------------------------------------------------------------

_WORD = re.compile(r"[^\W_]+")


def fold(text: str) -> str:
    """Lower-case and strip diacritics as the index's tokenizer does (`Ödeme` -> `odeme`)."""
    if text.isascii():  # the same result, without a step per character
        return text.lower()
    decomposed = unicodedata.normalize("NFKD", text)
    return "".join(c for c in decomposed if not unicodedata.combining(c)).lower()


def fold_map(text: str) -> tuple[str, list[int]]:
    """`text` folded character by character (as `fold` folds it), and for each folded character
    the index in `text` of the one it came from."""
    out: list[str] = []
    where: list[int] = []
    for i, ch in enumerate(text):
        for c in unicodedata.normalize("NFKD", ch.lower()):
            if not unicodedata.combining(c):
                out.append(c)
                where.append(i)
    return "".join(out), where


def words(text: str) -> list[str]:
    """The words of `text`, folded, in order."""
    return _WORD.findall(fold(text))


def handle_key(name: str) -> str:
    """What makes two handles (or aliases) one: their words (`Foo-Bar` = `foo bar`)."""
    return " ".join(words(name))


def split_aliases(stored: str) -> tuple[str, ...]:
    """A unit's aliases as the index stores them (joined by ALIAS_SEP)."""
    return tuple(a for a in stored.split(ALIAS_SEP) if a)


# --- stopwords -----------------------------------------------------------------------------------

# Words that carry no topic; dropped from a query unless nothing else is left.
STOPWORDS = frozenset(
    """a about an and any are as at be been but by can could did do does for from had has have he
    her hers him his how i if in into is it its me my of on or our she should so than that the
    their them then there these they this to us was we were what when where which who whom whose
    why will with would you your
    s t don doesn didn isn aren wasn weren ll ve""".split()  # it's, don't, we'll: split leftovers
)

# Searching what was said in chat turns: they are full of words like `just`, `got`, `some`. The
# letters `s` and `t` stay searchable there: a possessive or a contraction is part of what was said
# (tools/eval_recall on LoCoMo: recall@5 69.0 with them, 68.0 without; recall@25 85.9 / 85.6).
TURN_STOPWORDS = (STOPWORDS - {"s", "t"}) | frozenset(
    """after again all also am before being doing done get got having here just ours out some
    those too""".split()
)

# Reading a prompt given to an agent: words of conversation with it, not of a topic.
CHAT_STOPWORDS = STOPWORDS | frozenset(
    """please pls plz kindly thanks thank thx ty cheers hi hey hello ok okay yes yeah yep no nope
    sure great good nice cool awesome perfect fine lgtm continue go ahead proceed next again now
    just also still really very quite bit little some something thing things stuff lets let
    fix fixes fixing help can could would might must may want wants need needs try trying look
    looks looking see check make makes do doing done get got give show tell explain figure out
    change changes update add write run use set up sort going here there
    one two this that these those it its it's i'm i'd i'll we're you're me my mine our ours your
    yours anything everything else well way able sorry wait hmm hm actually maybe
    undo redo last previous above below earlier
    """.split()
)


# --- FTS5 ----------------------------------------------------------------------------------------

# Chinese and Japanese are written without spaces: FTS5's unicode61 tokenizer makes a whole run
# of such characters one token, so no word inside it could be found. Such runs are indexed as
# their overlapping character pairs (bigrams, as Lucene's CJK analyzer does: most Chinese words
# are two characters, and a trigram index cannot find a two-character word), plus the run's last
# character, so a one-character query can match as a prefix. Hangul is included (its particles
# attach to words).
_CJK_CLASS = (
    "[\u1100-\u11ff\u3005-\u3007\u3040-\u30fa\u30fc-\u30ff\u3130-\u318f\u31f0-\u31ff"
    "\u3400-\u4dbf\u4e00-\u9fff\uac00-\ud7af\uf900-\ufaff\uff66-\uff9f\U00020000-\U0003134f]+"
)


@functools.cache
def _cjk() -> re.Pattern[str]:
    return re.compile(_CJK_CLASS)  # compiling it costs a few ms: only for text that is not ASCII


def _bigrams(run: str) -> list[str]:
    return [run[i : i + 2] for i in range(len(run) - 1)] or [run]


def cjk_split(text: str) -> str:
    """`text` as the index stores it for FTS5: each CJK run as its bigrams and last character,
    folded the way queries are (see fold), so both sides tokenize alike."""
    if text.isascii():
        return text

    def grams(m: re.Match[str]) -> str:
        run = fold(m.group())
        pieces = _bigrams(run) + ([run[-1]] if len(run) > 1 else [])
        return " " + " ".join(pieces) + " "

    return _cjk().sub(grams, text)


def cjk_terms(word: str) -> list[str]:
    """A folded query word as terms: a CJK run becomes its bigrams (a lone character stays one
    term, matched as a prefix), other letters stay as they are."""
    if word.isascii():
        return [word]
    out: list[str] = []
    at = 0
    for m in _cjk().finditer(word):
        if m.start() > at:
            out.append(word[at : m.start()])
        out += _bigrams(m.group())
        at = m.end()
    if at < len(word):
        out.append(word[at:])
    return out


def lone_cjk(term: tuple[str, ...]) -> bool:
    """A one-character CJK term: it matches as the start of the index's bigrams."""
    return (
        len(term) == 1
        and len(term[0]) == 1
        and not term[0].isascii()
        and bool(_cjk().match(term[0]))
    )


def fts_phrase(terms: Iterable[str], *, prefix: bool = False) -> str:
    """`terms` as one quoted FTS5 phrase (in order, adjacent), never an operator or a column
    filter: `"not"` is the word not. With `prefix` its last term matches as a word's start."""
    body = " ".join(t.replace('"', '""') for t in terms)
    return f'"{body}" *' if prefix else f'"{body}"'


# --- how common a word is ------------------------------------------------------------------------

COMMON = 0.4  # a word held by more than this share of units hardly tells one from another
COMMON_MIN_UNITS = 20  # in fewer units a share means nothing: no word is common there


def idf(df: int, total: int) -> float:
    """BM25's inverse document frequency of a word `df` of `total` units hold: what holding it
    says about a unit (near zero from about half the units on)."""
    return math.log(1 + (max(total, 1) - df + 0.5) / (df + 0.5))


def common(df: int, total: int) -> bool:
    """Whether a word `df` of `total` units hold is common (see the module's docstring)."""
    return total >= COMMON_MIN_UNITS and df > COMMON * total


# --- a long query --------------------------------------------------------------------------------

# A query's terms searched at most. Each costs a few index lookups, so a pasted wall of text took
# seconds (15,000 words: 7 s); every question of testdata/golden.jsonl, dev.jsonl, the LoCoMo set
# and testdata/prime has 19 terms or fewer, and prime reads 60 words at most.
MAX_TERMS = 64
# Of a longer query, the terms whose counts in the vault are looked up (one lookup each); beyond
# it, the terms rarest in English (english_rank) go first.
SHORTLIST = 4 * MAX_TERMS
# The bundled embedding model's tokenizer (brain.embed loads it). Its WordPiece vocabulary lists
# whole words roughly in order of frequency in English, from `the` (id 1996) on, which
# english_rank and brain.search.everyday read.
TOKENIZER = Path(__file__).parent / "data" / "tokenizer.json"
NOT_ENGLISH = 1 << 20  # the rank of a word that is not in it: past its 30,522 entries


@functools.cache
def _ranks() -> dict[str, int]:
    """The tokenizer's vocabulary, read once per process (only a query of more than SHORTLIST
    terms gets here)."""
    import json

    try:
        vocab: dict[str, int] = json.loads(TOKENIZER.read_bytes())["model"]["vocab"]
    except (OSError, ValueError, KeyError, TypeError):
        return {}
    return vocab


def english_rank(word: str) -> int:
    """How rare `word` is in English: its id in the embedding tokenizer's vocabulary (a higher
    id is a rarer word); past them all when it is no whole word there (a name, an identifier)."""
    return _ranks().get(word, NOT_ENGLISH)


def telling(
    terms: Sequence[str],
    held: Callable[[int], int],
    named: Container[str] = (),
    limit: int = MAX_TERMS,
) -> list[int]:
    """Which of a query's distinct `terms` to search: all when they are `limit` or fewer, else
    the `limit` that tell most. `held(k)` is how many units (turns) hold `terms[k]`; `named` are
    the words of the handles and aliases the query names, all their words.

    The words of a handle the query names come first, then the terms the vault holds, the rarest
    there first (the IDF that weighs them in the ranking), then the terms it does not hold; ties
    go in query order. `held` is asked for SHORTLIST terms at most: of more, the named words are
    asked first, then those rarest in English (a word that is no English word first: a name,
    jargon), then the other words with a digit (ids, hashes, numbers: a log is full of them), and
    the others dropped. Returns the positions kept, in query order."""
    if len(terms) <= limit:
        return list(range(len(terms)))
    asked: Sequence[int] = range(len(terms))
    if len(terms) > SHORTLIST:
        first = [k for k in asked if terms[k] in named]
        ranks = [english_rank(t) for t in terms]
        rest = sorted(
            (k for k in asked if terms[k] not in named), key=lambda k: _rarer(terms[k], ranks[k])
        )
        asked = (first + rest)[:SHORTLIST]  # a stable sort: ties in query order
    df = {k: held(k) for k in asked}
    kept = sorted(asked, key=lambda k: (terms[k] not in named, df[k] == 0, df[k], k))
    return sorted(kept[:limit])


def _rarer(term: str, rank: int) -> tuple[bool, int]:
    """A sort key, rarest first: English words by rank, words that are not English before them
    unless they hold a digit (then after them all)."""
    return rank == NOT_ENGLISH and not term.isalpha(), -rank
