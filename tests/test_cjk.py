"""Chinese and Japanese, written without spaces, are searchable by the words inside a run."""

from __future__ import annotations

import shutil
from pathlib import Path

import pytest
from conftest import FIXTURE_VAULT, brain

from brain import vocab
from brain.commands.find import find

BULLETS = "\n".join(
    [
        "",
        "## 多语言",
        "",
        "- **退款期限** (aliases: 退款政策) — "
        "购买后一百八十天内可申请退款，逾期交客服主管 — 政策 — 2026-06-01",
        "- **数据库备份** — 数据库快照每天凌晨三点备份到欧洲的存储桶里 — 运维 — 2026-04-10",
        "- **デプロイ禁止日** (aliases: 金曜日のデプロイ) — "
        "金曜日の午後は本番環境へのデプロイを行わない — チーム — 2026-05-04",
        "- **ねこ** — 事務所の猫が好きな餌はマグロです — メモ — 2026-03-03",
        "",
    ]
)
NOTE = """# 会議メモ

決済チームは退出手続きと款项核对を来週に延期した。

レビューは火曜日に行う。
"""


@pytest.fixture
def cjk_vault(tmp_path: Path) -> Path:
    vault = tmp_path / "vault"
    shutil.copytree(FIXTURE_VAULT, vault)
    memory = vault / "AI" / "MEMORY.md"
    memory.write_text(memory.read_text(encoding="utf-8") + BULLETS, encoding="utf-8")
    (vault / "notes" / "会议.md").write_text(NOTE, encoding="utf-8")
    return vault


def handles(vault: Path, query: str) -> list[str]:
    return [h.handle or h.path for h in find(vault, query).hits]


@pytest.mark.parametrize(
    ("query", "handle"),
    [
        ("退款", "退款期限"),  # two characters, inside a longer run
        ("申请", "退款期限"),
        ("客服主管", "退款期限"),
        ("存储桶", "数据库备份"),
        ("凌晨", "数据库备份"),
        ("金曜", "デプロイ禁止日"),  # Japanese, kanji
        ("本番環境", "デプロイ禁止日"),
        ("デプロイ", "デプロイ禁止日"),  # katakana with voiced marks, folded alike on both sides
        ("マグロ", "ねこ"),
        ("猫", "ねこ"),  # one character: the start of a pair
        ("餌", "ねこ"),
    ],
)
def test_a_word_inside_a_run_is_found(cjk_vault: Path, query: str, handle: str) -> None:
    assert handles(cjk_vault, query)[0] == handle


def test_a_question_written_as_one_run_ranks_the_unit_holding_most_of_it(cjk_vault: Path) -> None:
    assert handles(cjk_vault, "购买后多久可以申请退款")[0] == "退款期限"
    assert handles(cjk_vault, "金曜日にデプロイしてもいいですか")[0] == "デプロイ禁止日"


def test_characters_apart_are_not_a_word(cjk_vault: Path) -> None:
    # 退 and 款 both stand in the note, but never side by side.
    assert "notes/会议.md" not in handles(cjk_vault, "退款")
    assert handles(cjk_vault, "款项核对") == ["notes/会议.md"]


def test_a_cjk_handle_or_alias_is_an_exact_match(cjk_vault: Path) -> None:
    for query in ("退款期限", "退款政策", "金曜日のデプロイ"):
        hit = find(cjk_vault, query).hits[0]
        assert "exact" in hit.match, query


def test_the_cli_finds_a_two_character_word(cjk_vault: Path) -> None:
    run = brain("find", "--vault", str(cjk_vault), "退款")
    assert run.code == 0, run.err
    assert run.out.splitlines()[0].startswith("AI/MEMORY.md:")
    assert " 退款期限 — 购买后" in run.out.splitlines()[0]


def test_index_and_query_split_runs_alike() -> None:
    assert vocab.cjk_split("退款期限为180天") == " 退款 款期 期限 限为 为 180 天 "
    assert vocab.cjk_terms("退款期限为180天") == ["退款", "款期", "期限", "限为", "180", "天"]
    assert vocab.cjk_split("plain ascii") == "plain ascii"
    assert vocab.cjk_terms("ödeme") == ["ödeme"]
