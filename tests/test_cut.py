"""Issue 27: an answer holds what stands out (the cut, `brain find` with default flags), a miss
is a miss (`brain log`, doctor, learn, the desk), an answer that served nothing saved nothing,
and the small vault's development set. Keyword mode (BRAIN_EMBED=none, the tests' default); the
model's side is the slow tests at the end and tools/eval answer (tests/test_eval.py)."""

from __future__ import annotations

import dataclasses
import json
from collections.abc import Sequence
from pathlib import Path
from typing import Any

import pytest
from conftest import ROOT, brain
from test_rank import bullet, make_vault  # thirty filler bullets: BM25's IDF needs a corpus

from brain import search, usage
from brain.commands.find import find

SMALL = ROOT / "testdata" / "small"
AGENT = {"BRAIN_CALLER": "claude-code", "BRAIN_SESSION": "s-1"}


def add(vault: Path, line: str) -> None:
    memory = vault / "AI" / "MEMORY.md"
    memory.write_text(memory.read_text(encoding="utf-8") + line + "\n", encoding="utf-8")


def find_json(vault: Path, *args: str, env: dict[str, str] | None = None) -> dict[str, Any]:
    run = brain("find", "--vault", str(vault), "--json", *args, env=env)
    assert run.code in (0, 1), run
    doc: dict[str, Any] = run.json()
    return doc


# Helm: one bullet holds the query's telling word, five others its commonest one.
HELM = [
    bullet("helm reuse values", "helm upgrade with reuse-values keeps the old chart values"),
    *(
        bullet(f"{name} values", f"the {name} config takes its values from the environment")
        for name in ("kafka", "redis", "nginx", "vault", "grafana")
    ),
]


@pytest.fixture
def helm(tmp_path: Path) -> Path:
    return make_vault(tmp_path / "helm", HELM)


def test_the_answer_is_what_stands_out_and_says_what_it_left_out(helm: Path) -> None:
    run = brain("find", "--vault", str(helm), "helm values", env=AGENT)
    assert run.code == 0, run
    lines = run.out.splitlines()
    assert [line.split(" — ")[0] for line in lines[:-1]] == ["AI/MEMORY.md:5 helm reuse values"]
    assert lines[-1] == "brain: strong answer; 5 weaker hits left out (--all lists them)"
    doc = find_json(helm, "helm values")
    assert (doc["count"], doc["evidence"], doc["cut_count"]) == (1, "strong", 5)


def test_limit_and_all_serve_the_ranked_list_uncut(helm: Path) -> None:
    listed = brain("find", "--vault", str(helm), "--all", "helm values", env=AGENT)
    assert len(listed.out.splitlines()) == 6  # every bullet holding a word, no line about a cut
    assert listed.out.splitlines()[0].startswith("AI/MEMORY.md:5 helm reuse values")
    assert brain("find", "--vault", str(helm), "-n", "10", "helm values", env=AGENT).out == (
        listed.out
    )
    doc = find_json(helm, "--all", "helm values")
    assert (doc["count"], doc["evidence"], doc["cut_count"]) == (6, "strong", 0)
    assert len(find(helm, "helm values", limit=3).hits) == 3


def test_a_person_is_told_how_sure_and_how_to_see_the_rest(helm: Path) -> None:
    from test_find import run_in_pty

    code, out = run_in_pty("find", "--vault", str(helm), "helm values")
    assert code == 0, out
    assert "1 of 1 hit for helm values" in out
    assert "strong answer; 5 weaker hits left out (--all lists them)" in out


def test_one_common_word_is_no_evidence(tmp_path: Path) -> None:
    """Its telling words in no unit, plus one word many bullets hold: nothing stands out, the
    find is exit 1 and a miss, whatever the common word reaches."""
    vault = make_vault(
        tmp_path / "v",
        [
            bullet(f"{name} code", f"the {name} code lives in the monorepo")
            for name in ("billing", "search", "ingest", "mobile", "admin", "reports")
        ],
    )
    query = "kotlin coroutine cancellation code"
    run = brain("find", "--vault", str(vault), query, env=AGENT)
    assert (run.code, run.out) == (
        1,
        "brain: nothing stands out; 6 weaker hits left out (--all lists them)\n",
    )
    doc = find_json(vault, query)
    assert (doc["count"], doc["evidence"], doc["cut_count"]) == (0, "none", 6)
    log = brain("log", "--vault", str(vault), "--json").json()
    assert [m["query"] for m in log["open"]] == [query]


# Three bullets each holding one word of the question in their bodies: the vault knows the words,
# no bullet holds most of them.
SPREAD = [
    bullet("edge proxy", "the gateway terminates tls for every public host"),
    bullet("tls store", "certificates are kept in the secret manager, one per host"),
    bullet("key schedule", "rotation of signing keys happens on the first monday"),
]
WEAK = "gateway certificates rotation"


@pytest.fixture
def spread(tmp_path: Path) -> Path:
    return make_vault(tmp_path / "spread", SPREAD)


def test_a_weak_answer_is_the_best_few_and_says_so(spread: Path) -> None:
    run = brain("find", "--vault", str(spread), WEAK, env=AGENT)
    assert run.code == 0, run
    *lines, said = run.out.splitlines()
    assert sorted(line.split(" — ")[0].split(" ", 1)[1] for line in lines) == [
        "edge proxy",
        "key schedule",
        "tls store",
    ]
    assert said == "brain: weak answer, nothing stands out"
    assert find_json(spread, WEAK)["evidence"] == "weak"


def test_a_weak_answer_serves_four_of_a_longer_list(tmp_path: Path) -> None:
    """Four, not three (search.WEAK_MOST, chosen on the tuning halves): five bullets each
    holding one word of the question, none most of it; the fifth is ranked but left out."""
    more = [
        bullet("asset list", "the inventory sheet lists every machine we run"),
        bullet("cloud spend", "the budget for cloud spend is reviewed monthly"),
    ]
    vault = make_vault(tmp_path / "five", [*SPREAD, *more])
    query = f"{WEAK} inventory budget"
    doc = find_json(vault, query)
    assert (doc["evidence"], doc["count"], doc["cut_count"]) == ("weak", 4, 1)
    assert len(find_json(vault, "--all", query)["hits"]) == 5


def test_a_weak_answer_is_a_miss_until_an_edit_answers_it(spread: Path) -> None:
    assert brain("find", "--vault", str(spread), WEAK, env=AGENT).code == 0  # lines were shown
    (event,) = _events(spread)
    assert (event.entries, event.evidence) == (3, "weak")
    log = brain("log", "--vault", str(spread), "--json").json()
    assert (log["lookups"], log["misses"]) == (1, 1)
    assert [m["query"] for m in log["open"]] == [WEAK]
    add(spread, bullet("cert rotation", "gateway certificates rotation runs every 60 days"))
    log = brain("log", "--vault", str(spread), "--json").json()
    assert log["open"] == []
    assert [(a["query"], a["hit_count"]) for a in log["answered"]] == [(WEAK, 1)]


def test_the_desk_lists_a_weak_answer_among_the_misses(spread: Path) -> None:
    from brain.desk import pages

    brain("find", "--vault", str(spread), WEAK, env=AGENT)
    assert [m.query for m in pages.misses(spread)["log"].open] == [WEAK]


def test_doctor_does_not_advise_carrying_what_weak_answers_returned(spread: Path) -> None:
    for session in ("s1", "s2", "s3", "s4", "s5", "s6"):
        brain("find", "--vault", str(spread), WEAK, env={**AGENT, "BRAIN_SESSION": session})
    doc = brain("doctor", "--vault", str(spread), "--json").json()
    assert doc["frequent"] == []


def test_doctor_advises_carrying_what_strong_answers_returned(helm: Path) -> None:
    for session in ("s1", "s2", "s3", "s4", "s5"):
        brain("find", "--vault", str(helm), "helm values", env={**AGENT, "BRAIN_SESSION": session})
    doc = brain("doctor", "--vault", str(helm), "--json").json()
    assert [(f["handle"], f["count"]) for f in doc["frequent"]] == [("helm reuse values", 5)]


def test_learn_takes_no_alias_from_a_weak_answer(spread: Path) -> None:
    for session in ("s1", "s2", "s3"):
        brain("find", "--vault", str(spread), WEAK, env={**AGENT, "BRAIN_SESSION": session})
    run = brain("learn", "--vault", str(spread), "--json")
    assert run.code == 0, run
    assert run.json()["proposed"] == []


def test_the_desk_shows_nothing_saved_for_lookups_that_served_nothing(spread: Path) -> None:
    from brain.desk import pages

    brain("find", "--vault", str(spread), "quokka", env=AGENT)  # printed nothing
    brain("find", "--vault", str(spread), "--json", "quokka", env=AGENT)  # an empty answer
    page = pages.ledger(spread)
    assert page["ledger"].lookups == 2
    assert (page["ledger"].saved, page["share"]) == (0, 0.0)
    brain("find", "--vault", str(spread), "gateway", env=AGENT)  # served one line
    assert pages.ledger(spread)["ledger"].saved > 0


def _events(vault: Path) -> list[usage.Event]:
    conn = usage.connect()
    try:
        return [e for e in usage.events(conn) if e.vault == str(vault)]
    finally:
        conn.close()


def test_two_notes_that_both_hold_a_rare_word_are_both_the_answer(tmp_path: Path) -> None:
    vault = make_vault(tmp_path / "v", [])
    (vault / "notes").mkdir()
    (vault / "notes" / "a.md").write_text("# A\n\nThe gnu migrates north.\n", "utf-8")
    (vault / "notes" / "b.md").write_text("# B\n\nThe gnu sleeps all day long.\n", "utf-8")
    doc = find_json(vault, "gnu")
    assert sorted(h["path"] for h in doc["hits"]) == ["notes/a.md", "notes/b.md"]
    assert (doc["evidence"], doc["cut_count"]) == ("strong", 0)


def test_a_pasted_log_that_names_a_bullet_stands_out(helm: Path) -> None:
    noise = " ".join(f"job{i} x{i:04x} retry" for i in range(30))
    doc = find_json(helm, f"{noise} helm reuse values {noise}")
    assert (doc["evidence"], doc["hits"][0]["handle"]) == ("strong", "helm reuse values")


def test_a_mistyped_handle_still_names_its_bullet(tmp_path: Path) -> None:
    """`hydraton mismatch` names **hydration mismatch** (one letter left out of a long word, the
    other word as written): strong, the bullet alone. Before, the word the vault lacks weighed
    most and nothing vouched: an empty answer."""
    fact = "server and client render differ: move Date.now into an effect"
    vault = make_vault(tmp_path / "typo", [bullet("hydration mismatch", fact)])
    for query in ("hydraton mismatch", "hydration mismtach"):  # a letter out; two swapped
        doc = find_json(vault, query)
        assert doc["evidence"] == "strong", query
        assert [h["handle"] for h in doc["hits"]] == ["hydration mismatch"]


def test_a_typo_is_one_letter_of_a_long_word_and_not_a_plural() -> None:
    assert search.typo_of("hydraton", {"hydration"})  # left out
    assert search.typo_of("terrafrom", {"terraform"})  # swapped
    assert search.typo_of("pgbouncr", {"pgbouncer", "mode"})
    assert search.typo_of("kubernetis", {"kubernetes"})  # changed
    assert not search.typo_of("requests", {"request"})  # a plural is the same word
    assert not search.typo_of("state", {"stage"})  # a short word is a word of its own
    assert not search.typo_of("hydration", {"hydration"})  # as written is no typo
    assert not search.typo_of("terraform", {"platform"})


def test_an_exact_handle_comes_first_and_alone(helm: Path) -> None:
    run = brain("find", "--vault", str(helm), "helm reuse values", env=AGENT)
    assert run.out.splitlines()[0].startswith("AI/MEMORY.md:5 helm reuse values")
    doc = find_json(helm, "helm reuse values")
    assert "exact" in doc["hits"][0]["match"]
    assert doc["evidence"] == "strong"


def test_stricter_rules_can_ask_the_same_question(helm: Path) -> None:
    """What prime will ask: the same stand-out test with other bars (search.Rule)."""
    from brain import index

    conn = index.open_index(helm)
    try:
        query = search.read_query(conn, "helm values")
        ranked = search.keyword_rank(conn, query)
        judge = search.Judge(query, ranked, None)
        listed = search.distinct(search.keyword_hits(ranked, query), search.ANSWER_DEPTH)
        shares = [judge.evidence(h).share for h in listed]
        assert shares[0] == 1.0 > max(shares[1:])
        assert search.answer(listed, judge, exact=False, floor=0.0).evidence == search.STRONG
        never = search.Rule(share=1.01, margin=9.0)
        assert not never.stands_out(judge.evidence(listed[0]))
        assert search.answer(listed, judge, exact=False, floor=0.0, rule=never).evidence == (
            search.WEAK
        )
    finally:
        conn.close()


# --- the small vault (testdata/small): a new user's 18 bullets ---------------------------------


def small_cases() -> list[dict[str, Any]]:
    text = (SMALL / "questions.jsonl").read_text(encoding="utf-8")
    return [json.loads(line) for line in text.splitlines() if line]


def test_the_small_set_is_well_formed_and_split_into_both_halves() -> None:
    import importlib.machinery
    import importlib.util

    loader = importlib.machinery.SourceFileLoader("tools_eval", str(ROOT / "tools" / "eval"))
    spec = importlib.util.spec_from_loader("tools_eval", loader)
    assert spec is not None
    tools_eval = importlib.util.module_from_spec(spec)
    loader.exec_module(tools_eval)
    cases = small_cases()
    memory = "".join(
        (SMALL / "vault" / "AI" / f).read_text(encoding="utf-8")
        for f in ("MEMORY.md", "LEARNINGS.md", "TUNINGS.md")
    )
    assert 10 <= memory.count("\n- **") <= 20
    categories = {c["category"] for c in cases}
    assert categories == {"on-topic", "everyday", "programming", "general"}
    for case in cases:
        for where in case["expect"]:
            path, handle = where.split("#")
            text = (SMALL / "vault" / path).read_text(encoding="utf-8")
            assert f"- **{handle}**" in text, where
        assert bool(case["expect"]) == (case["category"] == "on-topic")
    for category in categories:
        splits = {tools_eval.split_of(c["query"]) for c in cases if c["category"] == category}
        assert splits == {"tune", "held"}, category


def test_the_small_vault_lints_clean(tmp_path: Path) -> None:
    import shutil

    shutil.copytree(SMALL / "vault", tmp_path / "small")
    run = brain("lint", "--vault", str(tmp_path / "small"))
    assert run.code == 0, run


@pytest.fixture
def small(tmp_path: Path) -> Path:
    import shutil

    shutil.copytree(SMALL / "vault", tmp_path / "small")
    return (tmp_path / "small").resolve()


def test_an_everyday_question_sharing_a_word_with_the_vault_gets_nothing(small: Path) -> None:
    query = "how many days of paid vacation are standard in Portugal"  # `vacation`: an alias
    run = brain("find", "--vault", str(small), query, env=AGENT)
    assert run.code == 1, run
    assert find_json(small, query)["hits"] == []
    on_topic = find_json(small, "who covers my code reviews while I'm away")
    assert on_topic["evidence"] == "strong"
    assert on_topic["hits"][0]["handle"] == "time off"


# --- with the model ------------------------------------------------------------------------------

ONNX = {"BRAIN_EMBED": "onnx", "BRAIN_WORKER": "0"}


@pytest.mark.slow
def test_a_hit_found_by_meaning_alone_stays_only_when_it_stands_out(small: Path) -> None:
    assert brain("reindex", "--vault", str(small), env=ONNX).code == 0
    doc = find_json(small, "who is my manager", env=ONNX)
    assert [h["handle"] for h in doc["hits"]] == ["team"]
    assert doc["cut_count"] >= 5  # the meaning-only neighbours a find used to serve
    off = find_json(small, "what should I cook for dinner tonight", env=ONNX)
    assert (off["hits"], off["evidence"]) == ([], "none")


@pytest.mark.slow
def test_a_question_the_world_answers_gets_no_weak_answer(small: Path) -> None:
    """`explain the rules of cricket`: the vault holds `rules` (an alias, PR rules) and
    `explain` (the answer style's `explaining`), so the query is mostly the vault's words and
    nothing stands out: a weak answer, four lines of the vault. Its meaning is nearer a general
    question (brain/data/general.txt) than any bullet's (search.Rule.weak_world): nothing."""
    assert brain("reindex", "--vault", str(small), env=ONNX).code == 0
    doc = find_json(small, "explain the rules of cricket", env=ONNX)
    assert (doc["hits"], doc["evidence"]) == ([], "none")
    assert find_json(small, "who is my manager", env=ONNX)["evidence"] == "strong"


@pytest.mark.slow
def test_a_question_the_vault_knows_better_than_the_world_gets_a_weak_answer(small: Path) -> None:
    """`who is my boss`: the vault says `manager`, so the query is not the vault's words and
    nothing vouched: an empty answer. The team bullet is nearer it than any general question
    (search.Rule.nearer): a weak answer, that bullet first, and still a miss."""
    assert brain("reindex", "--vault", str(small), env=ONNX).code == 0
    for query, first in (
        ("who is my boss", "team"),
        ("how do trucks report their position", "tracker api"),
    ):
        doc = find_json(small, query, env=ONNX)
        assert doc["evidence"] == "weak", query
        assert doc["hits"][0]["handle"] == first, query


def test_a_rule_asks_the_world_only_when_it_is_known() -> None:
    """`Evidence.world` (a hit's cosine over the query's nearest general question's) gates a
    stand-out under a rule that asks it, and nothing when either is unknown (keywords only, or
    a rule that does not ask)."""
    strong = search.Evidence(share=1.0, margin=0.5, held=2, terms=2, lead=0.5, world=-0.2)
    assert search.FIND.stands_out(strong)
    assert not search.PRIME.stands_out(strong)
    assert search.PRIME.stands_out(dataclasses.replace(strong, world=-0.1))
    assert search.PRIME.stands_out(dataclasses.replace(strong, world=None))


class Counting:
    """An embedder that counts the texts it embeds (every vector the same)."""

    dim = 4

    def __init__(self, model_id: str) -> None:
        self.model_id = model_id
        self.texts = 0

    def embed(self, texts: Sequence[str], *, batch_size: int = 32, query: bool = False) -> Any:
        import numpy as np

        self.texts += len(texts)
        return np.full((len(texts), 4), 0.5, dtype=np.float32)


def test_the_general_questions_are_embedded_once_per_model(
    monkeypatch: pytest.MonkeyPatch,
) -> None:
    """Embedding them costs a model 1.6 s: done once per model and kept beside the models; a
    kept file that is damaged is embedded again, never read wrong."""
    from brain import config, semantic

    lines = [t for t in semantic.GENERAL.read_text().splitlines() if t and t[0] != "#"]
    assert len(lines) > 500
    monkeypatch.setattr(semantic, "_WORLD", {})
    first = Counting("test:counting")
    assert semantic.general(first).shape == (len(lines), 4)  # type: ignore[arg-type]
    assert first.texts == len(lines)
    monkeypatch.setattr(semantic, "_WORLD", {})  # another process
    again = Counting("test:counting")
    assert semantic.general(again).shape == (len(lines), 4)  # type: ignore[arg-type]
    assert again.texts == 0
    (kept,) = (config.data_dir() / "models").glob("general-*.npy")
    kept.write_bytes(kept.read_bytes()[:200])
    monkeypatch.setattr(semantic, "_WORLD", {})
    damaged = Counting("test:counting")
    assert semantic.general(damaged).shape == (len(lines), 4)  # type: ignore[arg-type]
    assert damaged.texts == len(lines)
    other = Counting("test:other")  # another model's vectors are its own
    semantic.general(other)  # type: ignore[arg-type]
    assert other.texts == len(lines)


class Refusing(Counting):
    """An embedder whose server refuses a batch of many texts (one text it embeds)."""

    def embed(self, texts: Sequence[str], *, batch_size: int = 32, query: bool = False) -> Any:
        from brain.embed import EmbedError

        if len(texts) > 1:
            raise EmbedError("the server said 413: too many inputs")
        return super().embed(texts, batch_size=batch_size, query=query)


def test_an_embedder_that_refuses_the_general_questions_leaves_the_search_as_it_was(
    monkeypatch: pytest.MonkeyPatch, capsys: pytest.CaptureFixture[str]
) -> None:
    """An HTTP provider that refuses 627 texts costs the rules their general questions, said once,
    never the vector half (which would fall back to keywords on every find)."""
    from brain import semantic

    monkeypatch.setattr(semantic, "_WORLD", {})
    refusing = Refusing("test:refusing")
    assert semantic.general(refusing).shape[0] == 0  # type: ignore[arg-type]
    assert semantic.general(refusing).shape[0] == 0  # type: ignore[arg-type]
    said = capsys.readouterr().err
    assert said.count("the general questions were not embedded") == 1, said
    assert "413" in said
