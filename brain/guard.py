"""The guard: text that would steer an agent without a person seeing it.

Every bullet and paragraph brain serves ends up in an agent's context, so a vault line is also a way
to instruct an agent. Two levels:

- **Always** (`check` a line, `defuse` it; `screen` a whole file for both): characters a person
  does not see or sees wrongly (zero-width and other invisible format characters, tag characters
  and runs of variation selectors that smuggle text, bidirectional controls that reorder what a
  screen shows, control characters), words mixing Latin, Greek and Cyrillic letters (`pаypal`
  with a Cyrillic `а`) or Latin and another script's look-alike letters (Cherokee `Ꭺ`, Armenian
  `օ`: Unicode's confusables, brain/data/confusables.tsv), words spelt in look-alike letters
  (fullwidth `ｉｇｎｏｒｅ`, mathematical `𝗂𝗀𝗇𝗈𝗋𝖾`: NFKC folds them to plain ones), letters
  carrying stacked or overlaid combining marks (zalgo, `i̶g̶n̶o̶r̶e̶`), and images (`![..](..)`,
  reference-style `![..][..]`, HTML `<img>` and other tags that load a URL when rendered). `brain
  lint` reports them, `propose`, `import` and `inbox approve` refuse them, and the index serves
  the line with them made harmless (`defuse`).
- **Strict** (`strict`, `strict_synonym`): opted into by `brain lint --strict` or `lint: strict` in
  the vault's policy file, for a bullet's handle, aliases and fact, and for synonyms.tsv rows:
  plain prose about the world, with no addresses, paths outside a project, markup, template or
  encoded runs, words addressing the reader, or phrasing that reads as an instruction to a model.
  Strict reads text through `plain` (NFKC, the look-alike table, marks and hidden characters
  dropped), so an instruction spelt in look-alike letters reads as the words it shows. Folding is
  the guard's reading only: nothing stored is changed.

`screen` is cheap for clean text: one `bytes.translate` leaves the characters of a file that are
not printable ASCII, and only lines holding one the guard cares about (or `![`, `<img`, a lone CR)
are looked at line by line.
"""

from __future__ import annotations

import functools
import re
import unicodedata
from dataclasses import dataclass
from pathlib import Path
from typing import TYPE_CHECKING

from brain.escapes import escaped
from brain.text import controls

if TYPE_CHECKING:
    from collections.abc import Iterator

# --- always ----------------------------------------------------------------------------------

# Every format character (Unicode category Cf; tests/test_guard.py checks the list against
# unicodedata), line and paragraph separators, and the characters that render as nothing: the
# combining grapheme joiner, Hangul fillers, Khmer inherent vowels, Mongolian and other variation
# selectors.
_SUSPECT = re.compile(
    "[\u00ad\u034f\u0600-\u0605\u061c\u06dd\u070f\u0890\u0891\u08e2\u115f\u1160\u17b4\u17b5"
    "\u180b-\u180f\u200b-\u200f\u2028-\u202e\u2060-\u206f\u3164\ufe00-\ufe0f\ufeff\uffa0"
    "\ufff9-\ufffb\U000110bd\U000110cd\U00013430-\U0001345f\U0001bca0-\U0001bca3"
    "\U0001d173-\U0001d17a\U000e0000-\U000e0fff]+"
)
_BIDI = frozenset("\u061c\u200e\u200f\u202a\u202b\u202c\u202d\u202e\u2066\u2067\u2068\u2069")
_JOINERS = frozenset("\u200c\u200d")  # emoji sequences, Persian and Indic words
_EMOJI_STYLE = frozenset("\ufe0e\ufe0f")  # text or emoji presentation of the symbol before it
_BLACK_FLAG = "\U0001f3f4"  # a subdivision flag: the black flag, tag letters, a cancel tag
_CANCEL_TAG = "\U000e007f"
# A carriage return inside a line sends the terminal back to its start: what follows overwrites
# what a person reads. One at the end is a CRLF line ending.
_INNER_CR = re.compile(r"\r(?!$)")
# Any image syntax: inline `![alt](url)`, reference `![alt][id]`, collapsed and shortcut `![alt]`;
# and HTML tags that load a URL when rendered.
_MD_IMAGE = re.compile(r"!\[([^\]\n]{0,500})\](?:\([^)\n]{0,2000}\)|\[[^\]\n]{0,500}\])?")
_MEDIA_TAG = r"<(?i:img|image|svg|picture|source|video|audio|iframe|embed|object)\b"
_HTML_MEDIA = re.compile(_MEDIA_TAG + r"[^>\n]{0,2000}>?")
# Greek and Cyrillic letters (and the phonetic extensions that hold some): a word without one
# cannot mix Latin with either.
_GREEK_CYRILLIC = (
    "\u0370-\u03ff\u0400-\u052f\u1c80-\u1c8f\u1d00-\u1dbf\u1f00-\u1fff\u2de0-\u2dff"
    "\ua640-\ua69f\uab65"
)
_HAS_GREEK_CYRILLIC = re.compile(f"[{_GREEK_CYRILLIC}]")
_SCRIPTS = ("LATIN", "GREEK", "CYRILLIC")
# Unicode's confusables (UTS #39) for the letters NFKC leaves alone: Cherokee, Cyrillic, Greek,
# Armenian, Coptic, Lisu ... letters that look like Latin ones, and Latin ones that look like
# plain ASCII (tools/gen_confusables.py makes it; brain/data/CONFUSABLES-NOTICE).
CONFUSABLES = Path(__file__).resolve().parent / "data" / "confusables.tsv"
# Compatibility letters NFKC folds that honest text holds: ligatures (PDF text), ordinals (1ª).
_HONEST_COMPAT = frozenset("\ufb00\ufb01\ufb02\ufb03\ufb04\ufb05\ufb06ªº")
# The combining marks text is garbled with (zalgo, strike-through): the blocks of marks for Latin,
# Greek, Cyrillic and symbols. A line without one has no letter the `combining` rule flags.
_MARK_BLOCKS = (
    "\u0300-\u036f\u0483-\u0489\u1ab0-\u1aff\u1dc0-\u1dff\u20d0-\u20ff\ua670-\ua672\ufe20-\ufe2f"
)
_HAS_MARK = re.compile(f"[{_MARK_BLOCKS}]")
# Marks one letter carries in honest text once composed (NFC): Vietnamese letters hold two,
# precomposed; Yoruba, Navajo, Lithuanian and IPA leave one or two uncomposed. More is stacking.
MARKS_MAX = 2
_OVERLAY = 1  # the canonical combining class of marks drawn through a letter (U+0336 ...)
# Units written with a Greek letter beside Latin ones (µs typed as Greek mu, kΩ): honest mixes.
_UNIT = re.compile(r"(?:[μµ](?:s|m|g|l|L|A|V|W|F|Hz|J|K|C|T|N|mol|Pa|Ω)|[kMGm]Ω)")


@dataclass(frozen=True)
class Flag:
    """One thing the guard found in a line: the rule and what, for a person to fix."""

    rule: str  # invisible | bidi | control | mixed-script | image; strict: url, email, ...
    detail: str

    def __str__(self) -> str:
        return f"{self.rule}: {self.detail}"


def _name(ch: str) -> str:
    return f"U+{ord(ch):04X} {unicodedata.name(ch, '')}".rstrip()


def _allowed(line: str, start: int, run: str) -> bool:
    """A run of format characters that honest text holds: a joiner inside an emoji sequence or a
    word of a script that needs it, one presentation selector after a symbol, a subdivision flag."""
    before = line[start - 1] if start else ""
    after = line[start + len(run) : start + len(run) + 1]
    if run in _JOINERS:
        return bool(before and after) and not (before.isascii() or after.isascii())
    if run in _EMOJI_STYLE or (len(run) == 1 and "\ufe00" <= run <= "\ufe0d"):
        return bool(before) and not before.isascii() and not before.isalpha()
    if len(run) == 1 and "\U000e0100" <= run <= "\U000e01ef":  # an ideographic variant
        return bool(before) and unicodedata.name(before, "").startswith("CJK")
    if before == _BLACK_FLAG and run.endswith(_CANCEL_TAG) and len(run) <= 8:
        return all("\U000e0020" <= c <= "\U000e007f" for c in run)
    return False


def _hidden(line: str) -> list[tuple[int, str, str]]:
    """(start, run, rule) for each run of invisible or bidi characters not in honest use."""
    found: list[tuple[int, str, str]] = []
    if _SUSPECT_CHARS.isdisjoint(line):
        return found
    for m in _SUSPECT.finditer(line):
        run = m.group()
        if _allowed(line, m.start(), run):
            continue
        bidi = [c for c in run if c in _BIDI]
        found.append((m.start(), run, "bidi" if bidi else "invisible"))
    return found


def _describe(run: str, rule: str) -> str:
    if rule == "bidi":
        names = ", ".join(dict.fromkeys(_name(c) for c in run if c in _BIDI))
        return f"{names} reorders what a screen shows; remove it"
    tags = sum(1 for c in run if "\U000e0000" <= c <= "\U000e007f")
    selectors = sum(
        1 for c in run if "\ufe00" <= c <= "\ufe0f" or "\U000e0100" <= c <= "\U000e01ef"
    )
    if tags > 1 or selectors > 1:
        what = "tag characters" if tags >= selectors else "variation selectors"
        return f"{len(run)} hidden {what} (text no one sees); remove them"
    names = ", ".join(dict.fromkeys(_name(c) for c in run))
    return f"{names}, which shows as nothing; remove it"


@functools.lru_cache(maxsize=4096)
def _script(ch: str) -> str:
    """Latin, Greek or Cyrillic for their letters; another script's name for a letter of it that
    looks like a Latin one (`CHEROKEE`); "" for anything else."""
    name = unicodedata.name(ch, "")
    head = name.split(" ", 1)[0]
    return head if head in _SCRIPTS or ch in _confusables() else ""


@functools.cache
def _confusables() -> dict[str, str]:
    """Look-alike letter -> the ASCII letters it looks like, from brain/data/confusables.tsv."""
    table: dict[str, str] = {}
    for line in CONFUSABLES.read_text(encoding="utf-8").split("\n"):
        code, sep, proto = line.partition("\t")
        if sep and not code.startswith("#"):
            table[chr(int(code, 16))] = proto
    return table


@functools.cache
def _mixable() -> tuple[frozenset[str], re.Pattern[str]]:
    """A Greek or Cyrillic letter, or a look-alike of a Latin one (as a set, to rule a line out at
    once, and a regex to find them): a word without one cannot mix scripts the way a lookalike
    does."""
    extra = "".join(re.escape(c) for c in _confusables() if not c.isascii())
    chars = _chars(_GREEK_CYRILLIC) | frozenset(_confusables())
    return chars, re.compile(f"[{_GREEK_CYRILLIC}{extra}]")


@functools.lru_cache(maxsize=65536)
def _compat(ch: str) -> str:
    """The ASCII letters a compatibility look-alike letter stands for (fullwidth `ｉ`, mathematical
    `𝗂`, circled `ⓘ`, letterlike `ℹ`: NFKC folds them), "" for any other character. Modifier
    letters (`xⁿ`), ligatures and ordinals are honest text."""
    if ch.isascii() or ch in _HONEST_COMPAT:
        return ""
    category = unicodedata.category(ch)
    if category == "Lm" or not (category[0] == "L" or category == "So"):
        return ""
    folded = unicodedata.normalize("NFKC", ch)
    return folded if folded.isascii() and folded.isalpha() else ""


def plain(text: str) -> str:
    """`text` as the guard reads it: NFKC (fullwidth and mathematical letters become plain ones),
    look-alike letters as the ASCII ones they look like, combining marks and hidden characters
    dropped. For reading only: what is stored never changes."""
    if text.isascii():
        return text
    table = _confusables()
    folded = unicodedata.normalize("NFKC", text)
    folded = unicodedata.normalize("NFD", "".join(table.get(c, c) for c in folded))
    return "".join(c for c in folded if unicodedata.category(c) not in ("Mn", "Me", "Cf"))


def _word_at(line: str, at: int) -> tuple[int, str]:
    """(start, word) of the run of letters (and combining marks) around `line[at]`."""
    start, end = at, at + 1
    while start and (line[start - 1].isalpha() or unicodedata.combining(line[start - 1])):
        start -= 1
    while end < len(line) and (line[end].isalpha() or unicodedata.combining(line[end])):
        end += 1
    return start, line[start:end]


def _mixed(line: str) -> list[tuple[int, str, str]]:
    """(start, word, majority script) for each word mixing Latin, Greek and Cyrillic letters.
    Only the words around a Greek or Cyrillic letter are looked at (a regex over every word of a
    non-ASCII line costs ~50 µs)."""
    found: list[tuple[int, str, str]] = []
    end = -1
    chars, pattern = _mixable()
    if chars.isdisjoint(line):
        return found
    for m in pattern.finditer(line):
        if m.start() < end:
            continue  # in the word just looked at
        start, word = _word_at(line, m.start())
        end = start + len(word)
        counts: dict[str, int] = {}
        for ch in word:
            script = _script(ch)
            if script:
                counts[script] = counts.get(script, 0) + 1
        if len(counts) < 2 or _UNIT.fullmatch(word):
            continue
        # the word's own script is the one most of its letters are in, Latin on a tie
        major = max(counts, key=lambda s: (counts[s], s == "LATIN"))
        found.append((start, word, major))
    return found


def _lookalikes(word: str, major: str) -> str:
    """`word` with its letters from another script than `major` spelt out (`p\\u0430ypal`)."""
    return "".join(escaped(c) if _script(c) not in ("", major) else c for c in word)


def _compat_runs(line: str) -> list[tuple[int, int]]:
    """(start, end) of each run of words spelt with compatibility look-alike letters."""
    runs: list[tuple[int, int]] = []
    if not any(_compat(c) for c in set(line)):  # each distinct character once, cached
        return runs
    for m in re.finditer(r"\S+", line):
        if not any(_compat(c) for c in m.group()):
            continue
        if runs and not line[runs[-1][1] : m.start()].strip():
            runs[-1] = (runs[-1][0], m.end())  # the next word of the same run
        else:
            runs.append((m.start(), m.end()))
    return runs


def _spelt(text: str) -> str:
    """`text` with its compatibility look-alike letters spelt out as escapes."""
    return "".join(escaped(c) if _compat(c) else c for c in text)


def _kinds(text: str) -> str:
    """What look-alike letters a text holds, by their names' first word (`Fullwidth`)."""
    heads = (unicodedata.name(c, "").split(" ", 1)[0].title() for c in text if _compat(c))
    return ", ".join(dict.fromkeys(heads))


def _clusters(line: str) -> Iterator[tuple[int, int, str]]:
    """(start, end, marks) of each letter carrying combining marks the `combining` rule flags:
    more than MARKS_MAX once composed (NFC), or one drawn through it or around it (an overlay
    or enclosing mark), on a Latin, Greek or Cyrillic letter."""
    if not _HAS_MARK.search(unicodedata.normalize("NFC", line)):
        return  # every mark composes into its letter (decomposed Vietnamese, café)
    end = 0
    for m in _HAS_MARK.finditer(line):
        if m.start() < end:
            continue
        start = m.start()
        while start and unicodedata.category(line[start - 1]) in ("Mn", "Me"):
            start -= 1
        end = m.end()
        while end < len(line) and unicodedata.category(line[end]) in ("Mn", "Me"):
            end += 1
        if not start or _script(line[start - 1]) not in _SCRIPTS or not line[start - 1].isalpha():
            continue
        composed = unicodedata.normalize("NFC", line[start - 1 : end])
        left = [c for c in composed if unicodedata.category(c) in ("Mn", "Me")]
        drawn = any(
            unicodedata.combining(c) == _OVERLAY or unicodedata.category(c) == "Me" for c in left
        )
        if len(left) > MARKS_MAX or drawn:
            yield start - 1, end, line[start:end]


def _marked_words(line: str) -> list[tuple[int, int]]:
    """(start, end) of each word holding a letter `_clusters` flags."""
    words: list[tuple[int, int]] = []
    for at, _, _ in _clusters(line):
        if words and at < words[-1][1]:
            continue  # in the word just found
        start, word = _word_at(line, at)
        words.append((start, start + len(word)))
    return words


def _unmarked(text: str) -> str:
    """`text` with the marks `_clusters` flags spelt out (a long run as a count)."""
    for start, end, marks in reversed(list(_clusters(text))):
        text = text[: start + 1] + _marks_shown(marks) + text[end:]
    return text


def _marks_shown(marks: str) -> str:
    return "".join(escaped(c) for c in marks) if len(marks) <= 3 else f"[{len(marks)} marks]"


def check(line: str) -> list[Flag]:
    """What the always-on guard finds in one line (without its line break)."""
    flags: list[Flag] = []
    if not line.isascii():
        by_rule: dict[str, list[str]] = {}
        for _, run, rule in _hidden(line):
            by_rule.setdefault(rule, []).append(_describe(run, rule))
        flags += [Flag(rule, "; ".join(dict.fromkeys(d))) for rule, d in by_rule.items()]
        for _, word, major in _mixed(line):
            others = sorted({_script(c).title() for c in word} - {"", major.title()})
            flags.append(
                Flag(
                    "mixed-script",
                    f"the word {_lookalikes(word, major)} mixes {major.title()} and "
                    f"{' and '.join(others)} letters (a lookalike); retype it in one script",
                )
            )
        for start, end in _compat_runs(line):
            text = line[start:end]
            shown = _spelt(text)
            shown = shown if len(shown) <= 80 else shown[:77] + "..."
            flags.append(
                Flag(
                    "lookalike",
                    f"{shown} is spelt in look-alike letters ({_kinds(text)}) that read as "
                    f"{plain(text)!r}; retype it in plain letters",
                )
            )
        for start, end in _marked_words(line):
            flags.append(
                Flag(
                    "combining",
                    f"the word {_unmarked(line[start:end])} has combining marks stacked on its "
                    f"letters or drawn through them (it reads as {plain(line[start:end])!r}); "
                    "remove them",
                )
            )
    found = controls(line)
    if _INNER_CR.search(line):
        found.append("CR")
    if found:
        flags.append(Flag("control", f"control characters ({', '.join(found)}); remove them"))
    if "![" in line and _MD_IMAGE.search(line):
        flags.append(
            Flag("image", "a Markdown image, which loads its URL when shown; link to it instead")
        )
    if "<" in line and _HTML_MEDIA.search(line):
        flags.append(
            Flag("image", "an HTML tag that loads a URL when shown (<img> ...); remove it")
        )
    return flags


def reason(line: str) -> str:
    """Why a line may not be written to the vault ("" when it may), in one clause."""
    flags = check(line)
    return "; ".join(str(f) for f in flags)


def defuse(line: str) -> str:
    """`line` as the index serves it: hidden characters, lookalike letters, stacked marks and
    control characters spelt out as escapes, a run of smuggled characters (or marks) replaced by
    a count, images by `[image removed: alt]`. A clean line comes back unchanged."""
    if not line.isascii():
        for start, run, rule in reversed(_hidden(line)):
            if rule == "invisible" and len(run) > 1:
                shown = f"[{len(run)} hidden characters]"
            else:
                shown = "".join(escaped(c) for c in run)
            line = line[:start] + shown + line[start + len(run) :]
        for start, word, major in reversed(_mixed(line)):
            line = line[:start] + _lookalikes(word, major) + line[start + len(word) :]
        for start, end in reversed(_compat_runs(line)):
            line = line[:start] + _spelt(line[start:end]) + line[end:]
        line = _unmarked(line)
    if controls(line) or _INNER_CR.search(line):
        from brain.text import visible

        line = _INNER_CR.sub(lambda m: escaped(m[0]), visible(line))
    if "![" in line:
        line = _MD_IMAGE.sub(
            lambda m: f"[image removed: {m[1]}]" if m[1].strip() else "[image removed]", line
        )
    if "<" in line:
        line = _HTML_MEDIA.sub("[image removed]", line)
    return line


def _chars(ranges: str) -> frozenset[str]:
    """The characters of a regex character class body (`a-z\u0370-\u03ff...`, no escapes)."""
    spans = re.findall("(.)-(.)|(.)", ranges, re.S)
    return frozenset(
        chr(c)
        for lo, hi, one in spans
        for c in (range(ord(lo), ord(hi) + 1) if lo else (ord(one),))
    )


# Anything a line must hold for `check` to find something in it, so that one look at a whole file
# finds the few lines worth a closer one (nearly always none). A set of the file's characters is
# taken first: a regex class this large costs ~100 ns a character on non-ASCII text.
_SUSPECT_CHARS = _chars(_SUSPECT.pattern[1:-2])
_TRIGGER_CHARS = (
    _SUSPECT_CHARS
    | _chars(_GREEK_CYRILLIC)
    | frozenset(
        chr(c) for c in (*range(0x00, 0x09), 0x0B, 0x0C, *range(0x0E, 0x20), *range(0x7F, 0xA0))
    )
)


_PLAIN_ASCII = b"\t\n\r" + bytes(range(0x20, 0x7F))


@functools.lru_cache(maxsize=65536)
def _triggers(ch: str) -> bool:
    """Whether a line holding `ch` is worth `check`'s closer look (asked once per distinct
    character of a file, not per character)."""
    return (
        ch in _TRIGGER_CHARS
        or ch in _confusables()
        or bool(_compat(ch))
        or bool(_HAS_MARK.match(ch))
        or unicodedata.category(ch) == "Me"
    )


def _flagged_lines(text: str) -> list[int]:
    """0-based numbers of the lines of `text` that may hold something the guard flags."""
    # what is left of the text without its printable ASCII (bytes.translate runs at memory speed;
    # a regex class costs ~60 ns a character): its controls and non-ASCII characters, mostly few
    rest = text.encode("utf-8", "surrogatepass").translate(None, _PLAIN_ASCII)
    hot = [c for c in set(rest.decode("utf-8", "surrogatepass")) if _triggers(c)] if rest else ()
    parts = [f"[{''.join(re.escape(c) for c in sorted(hot))}]"] if hot else []
    if "\r" in text:
        parts.append(r"\r(?!\n|$)")
    if "![" in text:
        parts.append(r"!\[")
    if "<" in text:
        parts.append(_MEDIA_TAG)
    if not parts:
        return []
    lines: list[int] = []
    pattern = re.compile("|".join(parts))
    number, pos = 0, 0
    m = pattern.search(text)
    while m:
        number += text.count("\n", pos, m.start())
        lines.append(number)
        # the rest of a line found is not looked at (a decomposed accent is a match per letter)
        pos = text.find("\n", m.start()) + 1
        if not pos:
            break
        number += 1
        m = pattern.search(text, pos)
    return lines


def screen(text: str) -> tuple[str, list[tuple[int, Flag]]]:
    """(`text` defused line by line, (1-based line, flag) for each flag), in one look at it."""
    candidates = _flagged_lines(text)
    if not candidates:
        return text, []
    lines = text.split("\n")
    flags = [(n + 1, f) for n in candidates for f in check(lines[n])]
    for n in dict.fromkeys(n - 1 for n, _ in flags):  # a line nothing was found in stays as is
        lines[n] = defuse(lines[n])
    return "\n".join(lines), flags


def scan(text: str) -> list[tuple[int, Flag]]:
    """(1-based line, flag) for every line of a text."""
    return screen(text)[1]


# --- strict --------------------------------------------------------------------------------------

# Strict's patterns are kept as strings, compiled by `re` (and cached there) on first use: only
# `brain lint` uses them, and compiling them costs ~25 ms that every reindex would pay otherwise.

# Each rule: (id, pattern, what to say). The patterns are bounded and anchored on word edges, so a
# long fact costs linear time.
# An address to fetch: a scheme, `www.`, or a host followed by a path. A domain on its own
# (`okafor-labs.dev is the company domain`) names a thing in the world, as a company name does.
_URL = (
    r"(?i)(?:\b[a-z][a-z0-9+.-]{1,20}://|\bwww\.[a-z0-9-]+\.|\b(?:mailto|data|javascript|file):"
    r"|\b(?:[a-z0-9-]{1,63}\.){1,10}[a-z]{2,24}/(?=[\w%~.-]))[^\s<>\"'`]{1,2000}"
)
_EMAIL = r"[\w.+-]{1,64}@[A-Za-z0-9-]{1,63}(?:\.[A-Za-z0-9-]{1,63}){1,10}"
_IPV4 = r"(?<![\w.])\d{1,3}(?:\.\d{1,3}){3}(?![\w]|\.\d)"
_IPV6 = r"(?<![\w:.])[0-9A-Fa-f]{0,4}(?::[0-9A-Fa-f]{0,4}){2,7}(?![\w:])"
# Paths that reach outside a project into the machine: from a root (`/etc/passwd`, `C:\`), to a
# network share, climbing out (`../`), into the hidden files of a home folder (its settings and
# credentials; the cache is none of those), or naming a credential file. A project's own paths
# (`AI/INBOX.md`, `next/image`, `.git/index.lock`) and a home folder's plain ones (`~/notes`) are
# the world a coding vault describes.
_PATH = (
    r"(?<![\w.~/\\:-])/(?:etc|root|proc|sys|dev|var|usr|bin|sbin|boot|home|Users|tmp|opt|private"
    r"|Library|System|mnt|srv|run|lib)\b"
    r"|(?<![\w.~/\\:-])/[\w.-]{1,255}/[\w.-]"
    r"|(?<![\w])[A-Za-z]:\\|\\\\[\w.-]{1,255}\\"
    r"|(?:^|[\s(\[{\"'`=])\.\.[/\\]|[/\\]\.\.(?:[/\\]|$)"
    r"|(?:~|\$HOME|\$\{HOME\}|%USERPROFILE%|%APPDATA%|%LOCALAPPDATA%)[/\\]\.(?!cache\b)\w"
    r"|%(?:APPDATA|LOCALAPPDATA)%"
    r"|(?<![\w.-])(?:\.env(?:\.\w{1,20})?|\.netrc|\.pgpass|\.git-credentials|\.npmrc|\.pypirc"
    r"|id_(?:rsa|dsa|ecdsa|ed25519)(?:\.pub)?|authorized_keys)(?![\w-])"
)
_MARKUP = (
    r"</?[A-Za-z][\w-]{0,30}(?:\s[^<>]{0,500})?/?>"  # an HTML tag
    r"|\[[^\]\n]{0,500}\]\([^)\n]{0,2000}\)|\[\[|\]\]"  # a Markdown or wiki link
    r"|^\s{0,3}\[[^\]\n]{1,500}\]:\s|`|\*\*\w[^*\n]{0,500}\*\*"  # a definition, code, bold
    r"|&(?:#\d{1,7}|#x[0-9A-Fa-f]{1,6}|[A-Za-z]{2,31});"  # an HTML entity
)
_TEMPLATE = (
    r"\{\{|\}\}|\{%|%\}|\$\{|<%|%>|\$\("
    r"|<\|[\w-]{0,40}\|>|\[/?INST\]|<</?SYS>>|</?s>"
    r"|(?:^|[\s;:.!?—])(?i:system|assistant|human|user)\s{0,3}:(?:\s|$)"
)
_ENCODED = (
    r"[A-Za-z0-9+/_-]{32,}={0,2}|(?:%[0-9A-Fa-f]{2}){4,}|(?:\\x[0-9A-Fa-f]{2}){4,}"
    r"|(?:\\u[0-9A-Fa-f]{4}){3,}"
)
# Words that name or address the model, everywhere (a tuning addresses the agent, yet has no
# need to call it an assistant or tell it to ignore anything).
_MODEL = (
    r"(?i)\b(?:assistants?|chatbots?|llms?|(?:large )?language models?|ai models?"
    r"|ignore|disregard)\b"
)
# Words addressing the reader, in MEMORY and LEARNINGS (facts about the world); TUNINGS, how the
# agent should work, says `you` and `always` by design.
_READER = r"(?i)\b(?:you|your|yours|yourself|yourselves|you're|you'll|you've|you'd|always)\b"
# Phrasing that reads as an instruction to a model, everywhere.
_INSTRUCTION = (
    r"(?i)\b(?:forget|override|bypass)\s+(?:\w+\s+){0,3}?(?:instructions?|rules?|prompts?"
    r"|guidelines?|guardrails?|directions?|context|polic(?:y|ies)|everything)\b"
    r"|\b(?:previous|prior|above|earlier|preceding|original|initial|new|hidden|secret|real)\s+"
    r"(?:instructions?|prompts?|directives?)\b"
    r"|\b(?:system prompt|developer mode|jailbreak|you are now|act as|pretend (?:to be|you)"
    r"|role-?play|from now on|at all times)\b"
    r"|\bin (?:every|each|all|any|your) (?:responses?|repl(?:y|ies)|answers?|messages?|outputs?"
    r"|conversations?|turns?)\b"
    r"|\bbefore (?:answering|responding|replying)\b"
    r"|\bwhen(?:ever)? (?:you|the user) (?:ask|asks|see|sees|read|reads)\b"
    r"|\b(?:do not|don't|never)\s+(?:tell|inform|mention|reveal|disclose|alert|notify|warn)\s+"
    r"(?:this|it|the user|the human|anyone|them|the owner)\b"
    r"|\bwithout (?:telling|informing|notifying|alerting|mentioning)\b"
    r"|\b(?:secretly|covertly)\b"
    r"|\|\s{0,3}(?:ba|z|da)?sh\b"  # piping into a shell
)
_CAPS_ALERT = r"\b(?:IMPORTANT|URGENT|ATTENTION|CRITICAL)\b"
# In MEMORY and LEARNINGS: telling a model how to answer.
_ANSWERING = (
    r"(?i)\b(?:respond|reply|answer)\s+(?:only\s+)?(?:with|in|by|that)\b"
    r"|\b(?:tell|ask|remind|inform)\s+the\s+(?:user|human)\b"
)
SYNONYM_MAX_WORDS = 4


def _ip(text: str) -> str:
    import ipaddress

    for m in (*re.finditer(_IPV4, text), *re.finditer(_IPV6, text)):
        try:
            address = ipaddress.ip_address(m.group())
        except ValueError:
            continue
        if not (address.is_loopback or address.is_unspecified):
            return m.group()
    return ""


def _encoded(text: str) -> str:
    for m in re.finditer(_ENCODED, text):
        run = m.group()
        if run[0] in "%\\":
            return run
        # a long word of letters and digits both (prose and identifiers have no digits in them;
        # `idle_in_transaction_session_timeout` is a setting, not an encoding)
        if any(c.isdigit() for c in run) and any(c.isalpha() for c in run):
            return run
    return ""


def _first(pattern: str, text: str) -> str:
    m = re.search(pattern, text)
    return m.group().strip() if m else ""


def strict(text: str, *, tuning: bool = False) -> list[Flag]:
    """What strict mode refuses in a bullet's handle, an alias or its fact: it must be plain prose
    about the world. `tuning`: a TUNINGS bullet, which addresses the agent by design. The text is
    read folded (`plain`): `ｉｇｎｏｒｅ` reads as `ignore`."""
    text = plain(text)
    flags: list[Flag] = []

    def flag(rule: str, found: str, why: str) -> None:
        if found:
            shown = found if len(found) <= 40 else found[:37] + "..."
            flags.append(Flag(rule, f"{why} ({defuse(shown)})"))

    flag("url", _first(_URL, text), "a web address")
    flag("email", _first(_EMAIL, text), "an e-mail address")
    flag("ip", _ip(text), "an IP address")
    flag("path", _first(_PATH, text), "a path outside the project")
    flag("markup", _first(_MARKUP, text), "markup")
    flag("template", _first(_TEMPLATE, text), "a template or chat token")
    flag("encoded", _encoded(text), "a long encoded run")
    reader = _first(_MODEL, text) or ("" if tuning else _first(_READER, text))
    flag("reader", reader, "a word addressing the reader")
    instruction = _first(_INSTRUCTION, text) or _first(_CAPS_ALERT, text)
    if not instruction and not tuning:
        instruction = _first(_ANSWERING, text)
    flag("instruction", instruction, "phrasing that reads as an instruction to a model")
    return flags


def strict_synonym(term: str, expansion: str) -> list[Flag]:
    """What strict mode refuses in a synonyms.tsv row: each side is plain prose, the term one
    query word, the expansion a word or a short phrase."""
    flags = strict(term) + strict(expansion)
    if len(term.split()) > 1:
        flags.append(Flag("synonym", "the term is more than one word, so no query word meets it"))
    if len(expansion.split()) > SYNONYM_MAX_WORDS:
        flags.append(
            Flag(
                "synonym",
                f"the expansion is more than {SYNONYM_MAX_WORDS} words: a synonym is a word or a "
                "short phrase",
            )
        )
    return flags
