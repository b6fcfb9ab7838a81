"""A handle made from prose: the short noun phrase a line of text is about.

`brain import` and `brain lessons --propose` turn a line someone wrote (a list item, a person's
correction) into a bullet, and the bullet needs a handle: a short lower-case noun phrase, as the
vault's own are (`pgbouncer transaction mode`, `sqlite wal`). The first words of the line are not
one: `Redis in staging is` ends in a verb, `Use make deploy ENV=staging` starts with one.

The rule, clause by clause (a clause ends at `.`, `!`, `?`, `;`, `:` or `,` and a space, or at a
dash between spaces), until one yields a phrase:
- words that name no topic are passed over: articles, pronouns, auxiliaries and modals, negations,
  prepositions, fillers (`please`, `also`, `hmm`, `one more thing`) and a person's rejection
  (`wrong`, `falsch`, `faux`), in English, German, Spanish and French, the languages brain's
  lessons read (brain.recall.lessons);
- so is a verb where a verb stands: the first word of a clause when it is a common imperative
  (`use`, `run`, `don't`), and the word after a subject, a negation, a modal or `please`
  (`you bumped`, `we use`, `don't prune`);
- then the phrase is the run of words that follows, up to MOST of them, to the next word of the
  kinds above; a preposition followed at once by a word (`redis in staging`) stays in it;
  assignments and flags (`ENV=staging`, `--frozen`) end it and a number alone is no phrase;
- words are lower-cased unless they are written in mixed case (`GitHub`, `useFakeTimers`).

Nothing found (a clause of only such words): the first words, as before. The lists are small on
purpose: a word they miss ends up in the phrase, which is still short, never a verb at its head.
A shell command's handle is its program and subcommand (`from_command`: `make deploy`, not `make
deploy ENV=staging`).
"""

from __future__ import annotations

import re

from brain.vocab import fold

MOST = 3  # words in a handle made from prose (a caller may put a project's name before it)

_CLAUSE = re.compile(r"[.!?;:,](?:\s|$)|\s[—–-]\s|\s\(")
_TRIM = "`*_\"'“”‘’«»()[]{}<>.,;:!?"


def _folded(words: str) -> frozenset[str]:
    """A word list as the words are compared: folded (`lösche` is `losche`)."""
    return frozenset(fold(w) for w in words.split())


# Words that never head a topic (folded).
_FUNCTION = _folded(
    # English: articles, pronouns, auxiliaries and modals, negations, prepositions, conjunctions
    "a an the this that these those it its it's that's there here what which who whom whose "
    "i i'm i've i'd i'll me my we we're we've we'd we'll us our you you're you've you'd you'll "
    "your he she they they're them their is are was were be been being am has have had having "
    "do does did doing done can could should would will shall may might must cannot can't "
    "won't don't doesn't didn't isn't aren't wasn't weren't shouldn't wouldn't couldn't not no "
    "never always again also just only even still yet already first next then now once instead "
    "please so but and or nor if because since as than when where while until unless before why "
    "how directly properly globally locally manually usually "
    "after though although of in on at to for from with without by about into onto over under "
    "via per like out up down off any anything everything something nothing some all each every "
    "more most less much many other another same such own too very really actually hmm ah oh "
    "well okay ok yes nope wait stop hold one thing things way time times bit lot "
    "wrong incorrect right correct fine good great "
    # German
    "der die das den dem des ein eine einen einem einer ist sind war waren bin bist hat haben "
    "wird werden kann können soll sollte muss müssen nicht kein keine keinen nie immer auch nur "
    "noch schon bitte doch lieber aber und oder wenn weil dass als wie aus bei mit nach von zu "
    "zum zur im in an auf für über unter ich du er sie es wir ihr man mein dein unser falsch so "
    "da hier dort nichts alles etwas stattdessen gehören gehört "
    # Spanish
    "el la los las un una unos unas es son era fue está están esta estan ser estar hay no nunca "
    "siempre también solo sólo ya todavía pero y o si porque que como de del en con por para "
    "sin sobre yo tú tu él ella nosotros usted otra otro cosa mal vez lugar próxima proxima "
    "todo nada algo más mas "
    # French
    "le la les un une des du de d' l' est sont était c'est n'est ce cet cette ces pas ne jamais "
    "toujours aussi seulement déjà encore mais et ou si parce que qui comme dans en avec pour "
    "par sans sur sous je tu il elle on nous vous ils elles faux ça ca plutôt plutot moi "
    "doivent doit faut peut"
)
# Verbs (folded): imperatives that open a clause (what follows is the topic), and common verbs
# that end a phrase (`the deploy key lives in`, `a 409 means`). Words that are nouns as often
# (`deploys`, `builds`) are not here.
_VERBS = _folded(
    "use run try call put keep add write set avoid prefer check start stop install pass read "
    "open go change rename remove delete switch move return commit push pull update fix let "
    "take give ask tell see look note remember ensure apply drop replace restart activate paste "
    "prune bump do don't never means lives runs uses needs takes goes points holds contains "
    "requires works fails breaks returns sits listens expects enforces gets makes keeps sends "
    "comes come becomes happens belongs depends lets says shows gives stays ran went "
    "nimm verwende benutze nutze mach lass lösche gehören gehört "
    "usa utiliza pon haz corre borra cambia hagas toques borres cambies ejecutes pongas añadas "
    "subas instales usamos "
    "utilise fais mets prends lance garde traduis supprime"
)
# After these a verb follows: it is passed over with them (`you bumped`, `don't prune`).
_BEFORE_VERB = _folded(
    "i we you they he she please don't do not never can can't could should would will won't "
    "must ich du wir man yo tú nosotros je nous vous"
)
_PREPOSITION = frozenset("in on at for of".split())
_CODE = re.compile(r"^-|=|^\$|://")


def _word(token: str) -> str:
    return token.strip(_TRIM)


def _key(word: str) -> str:
    return fold(word).replace("’", "'")


def styled(word: str) -> str:
    """Lower case, as the vault's handles are, unless a part of the word is in mixed case
    (`GitHub`, `useFakeTimers`; `Redis-Container` is two words written in title case)."""
    for part in word.split("-"):
        inner = part[1:]
        if any(c.isupper() for c in inner) and not inner.isupper():
            return word
    return word.lower()


def _phrase(words: list[str], most: int) -> list[str]:
    """The topic of one clause's words, or [] when it names none: the first run of words that
    is not a number alone (`a 409 means the payment` is about the payment)."""
    i = 0
    while i < len(words):
        i = _start(words, i)
        out, i = _run(words, i, most)
        if not out:  # _start stopped at a word _run takes, or at the end
            return []
        if not all(w.replace(".", "").isdigit() for w in out):
            return out
    return []


def _start(words: list[str], i: int) -> int:
    """Where a phrase can start from `i` on: past function words, and past a verb where one
    stands (a common one, or the word after a subject, a negation, a modal or `please`)."""
    expect_verb = False
    while i < len(words):
        k = _key(words[i])
        if k in _FUNCTION or _CODE.search(words[i]) or not words[i]:
            expect_verb = expect_verb or k in _BEFORE_VERB
        elif expect_verb or k in _VERBS:
            expect_verb = False
        else:
            break
        i += 1
    return i


def _run(words: list[str], i: int, most: int) -> tuple[list[str], int]:
    """The phrase from `i`: up to `most` words, to the next function word, verb or piece of
    code; a preposition followed at once by a word stays in it. Returns it and where it ends."""
    out: list[str] = []
    while i < len(words) and len(out) < most:
        w, k = words[i], _key(words[i])
        if k in _PREPOSITION and out and len(out) + 1 < most and i + 1 < len(words):
            nxt = _key(words[i + 1])
            if nxt in _FUNCTION or nxt in _VERBS or _CODE.search(words[i + 1]):
                break
        elif k in _FUNCTION or k in _VERBS or _CODE.search(w) or not w:
            break
        out.append(w)
        i += 1
    while out and _key(out[-1]) in _PREPOSITION:
        out.pop()
    return out, i


def from_prose(text: str, most: int = MOST) -> str:
    """The handle a line of prose gives (see the module's docstring); "" for no text."""
    for clause in _CLAUSE.split(text):
        words = [_word(t) for t in clause.split()]
        found = _phrase([w for w in words if w], most)
        if found:
            return " ".join(styled(w) for w in found)
    words = [_word(t) for t in _CLAUSE.split(text, maxsplit=1)[0].split()]
    return " ".join(styled(w) for w in words if w and not _CODE.search(w))[:60].strip()


def from_command(words: list[str], most: int = MOST) -> str:
    """The handle a shell command gives (its words from the program on, as
    brain.recall.past.programs splits them): its first `most` words less assignments
    (`ENV=staging`, `-chdir=envs/prod`), paths and the flags left trailing, `pnpm build`,
    `terraform plan`, `python -m pytest`."""
    kept = [w for w in words[:most] if "=" not in w and "/" not in w]
    while kept and kept[-1].startswith("-"):
        kept.pop()
    return " ".join(kept)
