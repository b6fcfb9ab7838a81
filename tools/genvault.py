"""A deterministic synthetic vault for the benchmark (and any test that needs a big vault).

The text is not meant to read well, only to look like a real vault to the parser and to BM25:
bullets in the three core files under `## Section` headings, hard-wrapped prose notes under
projects/, and words drawn from a Zipf-like distribution (a few words everywhere, a long tail of
rare ones) so posting lists, candidate counts and scores have realistic shapes.

    sys.path.insert(0, "tools")  # tools/ is not a package
    from genvault import generate
    info = generate(tmp_path / "vault", bullets=2000, notes=50)
"""

from __future__ import annotations

import bisect
import datetime as dt
import itertools
import random
import textwrap
from dataclasses import dataclass
from pathlib import Path

SEP = " — "  # the vault's field separator (U+2014), as brain.vocab.SEP
CORE = (("AI/MEMORY.md", "Memory"), ("AI/LEARNINGS.md", "Learnings"), ("AI/TUNINGS.md", "Tunings"))
CORE_SHARE = (0.45, 0.35, 0.20)  # MEMORY grows fastest in real vaults; TUNINGS stays short

# The head of the distribution: words that carry no topic (brain drops them from queries).
FUNCTION_WORDS = """the to a of and in is for on that with it when as by from not or be are
this an at so if but was then only after before into its every than all""".split()

# Real technical vocabulary: the middle of the distribution, and what handles are made of.
CONTENT_WORDS = """
sqlite index query cache build deploy release config server client request response timeout
retry token session commit branch merge rebase hook test fixture database migration schema
table column row vector embedding model search ranking score handle alias vault note bullet
prose heading section paragraph parser lexer tokenizer unicode encoding utf8 locale timezone
date clock cron job queue worker thread process signal socket port proxy gateway ingress
service container image registry kubernetes helm chart pod node cluster namespace secret
credential password key certificate tls dns domain route load balancer latency throughput
memory disk cpu network bandwidth packet firewall vpn ssh shell terminal editor plugin
extension package dependency version upgrade downgrade lockfile wheel virtualenv interpreter
python golang rust typescript javascript react webpack vite eslint prettier ruff mypy pytest
coverage benchmark profile flamegraph trace span metric alert dashboard grafana prometheus
logging logger stderr stdout exit error exception panic crash stacktrace debugger breakpoint
payment invoice refund charge merchant customer account ledger balance currency webhook
stripe sandbox staging production rollout rollback canary feature flag experiment cohort
user admin role permission policy audit compliance backup restore snapshot replica primary
failover quorum consensus raft leader follower partition shard offset topic consumer producer
kafka redis postgres mysql mongo elastic bucket object storage blob upload download stream
buffer chunk batch window aggregate filter join sort limit pagination cursor iterator generator
async await future promise callback event loop scheduler lock mutex semaphore deadlock race
atomic transaction isolation snapshot vacuum checkpoint wal journal fsync rename inode path
file folder directory symlink permissions owner group mode umask watcher inotify polling
hash digest checksum signature nonce salt entropy random seed deterministic flaky retryable
idempotent ordering duplicate dedupe compaction segment merge optimize prefix suffix fuzzy
stemmer synonym stopword phrase boolean operator escape quote newline whitespace tab indent
markdown yaml json toml csv protobuf schema validation serializer decoder encoder gzip zstd
compression archive tarball checksum mirror artifact pipeline runner workflow matrix cache
secretstore vaultwarden onepassword keychain gpg signing notary provenance sbom scanner
kestrel heron osprey falcon wren finch starling magpie raven swift harrier merlin
""".split()

# Syllables for the long tail: made-up project names, identifiers and jargon.
_SYLLABLES = """ka lo ver min dra sul pen tor bax rin mol fen gar tis nu pol zen
cor ly mar sen dor vik hal tem bri os un ar el im qua fro ste gli""".split()


@dataclass(frozen=True)
class Vocabulary:
    words: tuple[str, ...]  # in rank order: words[0] is the most frequent
    cumulative: tuple[float, ...]  # Zipf weights, summed, for bisect sampling
    content_from: int  # index of the first content word (everything before is function words)

    def draw(self, rng: random.Random, *, content: bool = False) -> str:
        lo = self.cumulative[self.content_from - 1] if content else 0.0
        x = lo + rng.random() * (self.cumulative[-1] - lo)
        return self.words[min(bisect.bisect_left(self.cumulative, x), len(self.words) - 1)]

    def rank(self, word: str) -> int:
        return self.words.index(word)


def vocabulary(rng: random.Random, tail: int = 6000, exponent: float = 1.05) -> Vocabulary:
    """Function words first, then real content words, then a long tail of made-up ones."""
    content = list(dict.fromkeys(CONTENT_WORDS))  # dedupe, keep order
    rng.shuffle(content)
    seen = set(FUNCTION_WORDS) | set(content)
    made: list[str] = []
    while len(made) < tail:
        word = "".join(rng.choice(_SYLLABLES) for _ in range(rng.choice((2, 2, 3, 3, 4))))
        if rng.random() < 0.08:
            word += str(rng.randint(2, 99))  # identifiers like `torbax3`
        if word not in seen:
            seen.add(word)
            made.append(word)
    words = (*FUNCTION_WORDS, *content, *made)
    weights = [1.0 / (r + 1) ** exponent for r in range(len(words))]
    return Vocabulary(words, tuple(itertools.accumulate(weights)), len(FUNCTION_WORDS))


@dataclass(frozen=True)
class GeneratedVault:
    root: Path
    bullets: int
    notes: int
    files: int
    bytes: int
    handles: tuple[str, ...]
    queries: dict[str, str]  # name -> a query with a known shape (see _queries)


def _date(rng: random.Random) -> str:
    start = dt.date(2023, 1, 1)
    return (start + dt.timedelta(days=rng.randrange(1300))).isoformat()


def _phrase(rng: random.Random, voc: Vocabulary, lo: int, hi: int) -> list[str]:
    return [voc.draw(rng) for _ in range(rng.randint(lo, hi))]


def _handle(rng: random.Random, voc: Vocabulary, taken: set[str]) -> str:
    size = rng.choice((1, 2, 2, 2, 2, 3, 3))
    while True:
        handle = " ".join(voc.draw(rng, content=True) for _ in range(size))
        if handle not in taken and len(set(handle.split())) == size:
            taken.add(handle)
            return handle
        size = min(size + 1, 4)  # a crowded name space makes handles longer, as in life


def _fact(rng: random.Random, voc: Vocabulary, handle: str) -> str:
    words = _phrase(rng, voc, 10, 34)
    if rng.random() < 0.6:  # facts usually mention their own topic
        words.insert(rng.randrange(len(words) + 1), handle)
    if len(words) > 14 and rng.random() < 0.4:
        cut = rng.randrange(6, len(words) - 4)
        words[cut] += ";"
    if rng.random() < 0.15:
        unit = rng.choice(("ms", "seconds", "MB"))
        words.append(f"{rng.choice((2, 5, 30, 60, 200, 500))} {unit}")
    return " ".join(words)


def _source(rng: random.Random, date: str) -> str:
    roll = rng.random()
    if roll < 0.6:
        return f"session {date}"
    if roll < 0.75:
        return f"PR #{rng.randint(10, 4000)}"
    return rng.choice(("docs", "claude", "incident review", "pairing", "postmortem"))


def _core_files(
    rng: random.Random, voc: Vocabulary, bullets: int
) -> tuple[dict[str, str], list[str]]:
    taken: set[str] = set()
    handles: list[str] = []
    files: dict[str, str] = {}
    counts = [round(bullets * s) for s in CORE_SHARE]
    counts[0] += bullets - sum(counts)
    for (rel, title), count in zip(CORE, counts, strict=True):
        lines = [f"# {title}", "", " ".join(_phrase(rng, voc, 12, 25)).capitalize() + ".", ""]
        left = count
        while left:
            section = " ".join(voc.draw(rng, content=True) for _ in range(rng.randint(1, 3)))
            lines += [f"## {section.capitalize()}", ""]
            if rng.random() < 0.2:
                lines += [" ".join(_phrase(rng, voc, 8, 20)).capitalize() + ".", ""]
            for _ in range(min(left, rng.randint(15, 90))):
                handle = _handle(rng, voc, taken)
                handles.append(handle)
                n_alias = rng.choice((0, 0, 1, 1, 2, 2, 3))
                aliases = [
                    " ".join(voc.draw(rng, content=True) for _ in range(rng.randint(1, 2)))
                    for _ in range(n_alias)
                ]
                alias = f" (aliases: {', '.join(dict.fromkeys(aliases))})" if aliases else ""
                date = _date(rng)
                fields = (_fact(rng, voc, handle), _source(rng, date), date)
                lines.append(f"- **{handle}**{alias}{SEP}{SEP.join(fields)}")
                left -= 1
            lines.append("")
        files[rel] = "\n".join(lines)
    return files, handles


def _sentence(rng: random.Random, voc: Vocabulary) -> str:
    return " ".join(_phrase(rng, voc, 6, 22)).capitalize() + rng.choice(".....?:")


def _note(rng: random.Random, voc: Vocabulary, title: str) -> str:
    out = []
    if rng.random() < 0.1:
        out += ["---", f"title: {title}", f"tags: [{voc.draw(rng, content=True)}]", "---", ""]
    out += [f"# {title.capitalize()}", ""]
    for _ in range(rng.randint(2, 6)):
        heading = " ".join(voc.draw(rng, content=True) for _ in range(rng.randint(1, 4)))
        out += [f"## {heading.capitalize()}", ""]
        for _ in range(rng.randint(1, 3)):
            roll = rng.random()
            if roll < 0.2:
                out += [f"- {_sentence(rng, voc)}" for _ in range(rng.randint(2, 6))]
            elif roll < 0.27:
                cmd = " ".join(voc.draw(rng, content=True) for _ in range(3))
                out += ["```", f"$ brain {cmd}", f"  {_sentence(rng, voc)}", "```"]
            else:
                para = " ".join(_sentence(rng, voc) for _ in range(rng.randint(2, 7)))
                out += textwrap.wrap(para, width=rng.choice((72, 78, 80)))
            out.append("")
    return "\n".join(out)


def _notes(rng: random.Random, voc: Vocabulary, notes: int) -> dict[str, str]:
    projects = [voc.draw(rng, content=True) for _ in range(40)]
    projects = list(dict.fromkeys(projects))[:12]
    kinds = ("handoffs", "plans", "state", "research", "notes")
    files: dict[str, str] = {}
    while len(files) < notes:
        title = " ".join(voc.draw(rng, content=True) for _ in range(rng.randint(2, 4)))
        slug = title.replace(" ", "-")
        kind = rng.choice(kinds)
        dated = kind == "handoffs" or rng.random() < 0.2
        name = f"{_date(rng)}-{slug}.md" if dated else f"{slug}.md"
        rel = f"projects/{rng.choice(projects)}/{kind}/{name}"
        if rel not in files:
            files[rel] = _note(rng, voc, title)
    return files


SYNONYMS = """term\texpansion
k8s\tkubernetes
db\tdatabase
db\tpostgres
pg\tpostgres
pr\tpull request
ci\tcontinuous integration
perf\tperformance
creds\tcredentials
tz\ttimezone
deps\tdependency
repo\trepository
"""


def _queries(
    rng: random.Random, voc: Vocabulary, core: dict[str, str], handles: list[str]
) -> dict[str, str]:
    """Queries of known shape, chosen from what was generated so that each has hits (or none)."""
    two_word = [h for h in handles if len(h.split()) == 2]
    handle = two_word[len(two_word) // 2]
    # a 2-word body query: two mid-frequency content words from one bullet's fact
    lo, hi = voc.content_from + 40, voc.content_from + 1500
    middle = set(voc.words[lo:hi])
    lines = [x for x in core["AI/LEARNINGS.md"].split("\n") if x.startswith("- **")]
    body = ""
    for line in lines[len(lines) // 2 :]:
        fact = line.split(SEP)[1]
        mids = [w for w in dict.fromkeys(fact.split()) if w in middle]
        if len(mids) >= 2:
            body = f"{mids[0]} {mids[1]}"
            break
    # a prefix: the start of a frequent handle word, as a half-typed name
    word = next(w for w in voc.words[voc.content_from + 5 :] if len(w) >= 7)
    common = voc.words[voc.content_from : voc.content_from + 2]
    return {
        "handle": handle,
        "body": body,
        "prefix": word[:4],
        "broad": " ".join(common),
        "nohit": "xqzjw vbnkfrt",  # letters no syllable uses
    }


def generate(
    root: Path, *, bullets: int = 10_000, notes: int = 500, seed: int = 1
) -> GeneratedVault:
    """Write a vault at `root` (created; must not hold a vault already). Same seed, same bytes."""
    rng = random.Random(seed)  # noqa: S311 -- reproducible text, not secrets
    voc = vocabulary(rng)
    core, handles = _core_files(rng, voc, bullets)
    prose = _notes(rng, voc, notes)
    files = {**core, **prose, "AI/synonyms.tsv": SYNONYMS, "AI/INBOX.md": "# Inbox\n"}
    size = 0
    for rel, text in files.items():
        path = root / rel
        path.parent.mkdir(parents=True, exist_ok=True)
        data = text.encode("utf-8")
        path.write_bytes(data)
        size += len(data)
    queries = _queries(rng, voc, core, handles)
    return GeneratedVault(root, bullets, notes, len(files), size, tuple(handles), queries)


def edit_bullet(root: Path, n: int, rel: str = "AI/LEARNINGS.md") -> int:
    """Change the fact of one bullet in `rel` (the n-th, modulo the count); return its line.

    The bullet stays valid and its size changes, so any change detector notices.
    """
    path = root / rel
    lines = path.read_text(encoding="utf-8").split("\n")
    bullets = [i for i, line in enumerate(lines) if line.startswith("- **")]
    i = bullets[(n * 7919) % len(bullets)]  # a stride spreads the edits over the file
    head, fact, *tail = lines[i].split(SEP)
    lines[i] = SEP.join([head, f"{fact} revised{n % 10 * 'x'} edit{n}", *tail])
    path.write_text("\n".join(lines), encoding="utf-8")
    return i + 1
