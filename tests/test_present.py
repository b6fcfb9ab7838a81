"""The presenter layer's core: one JSON builder, one writer that logs."""

from __future__ import annotations

import dataclasses
import json
from pathlib import Path

import pytest

from brain import present
from brain.config import usage_log_path
from brain.usage import connect, events


@dataclasses.dataclass(frozen=True)
class Inner:
    b: int
    a: tuple[str, ...]


@dataclasses.dataclass(frozen=True)
class Outer:
    z: str
    inner: Inner
    items: tuple[Inner, ...]
    maybe: Inner | None
    extra: dict[str, tuple[int, ...]]


def test_data_is_the_fields_in_declared_order_recursively() -> None:
    value = Outer("z", Inner(2, ("x",)), (Inner(1, ()),), None, {"k": (1, 2)})
    doc = present.data(value)
    assert list(doc) == ["z", "inner", "items", "maybe", "extra"]
    assert list(doc["inner"]) == ["b", "a"]
    assert doc == json.loads(json.dumps(dataclasses.asdict(value)))
    assert present.json_text(value) == json.dumps(doc, ensure_ascii=False)


def test_emit_writes_the_answer_and_logs_its_bytes(
    tmp_path: Path, capsys: pytest.CaptureFixture[str]
) -> None:
    lookup = present.Lookup("find", "tester", "s1", "ü query", 1, tmp_path, ("AI/MEMORY.md#x",))
    code = present.emit(present.Answer("héllo", "a note", 1, lookup))
    out, err = capsys.readouterr()
    assert (code, out, err) == (1, "héllo\n", "a note\n")
    conn = connect(usage_log_path())
    try:
        (event,) = events(conn)
    finally:
        conn.close()
    assert (event.command, event.caller, event.query, event.entries) == (
        "find",
        "tester",
        "ü query",
        1,
    )
    assert event.bytes == len("héllo\n".encode()) == present.size("héllo")


def test_an_empty_answer_writes_nothing(capsys: pytest.CaptureFixture[str]) -> None:
    assert present.emit(present.Answer()) == 0
    assert capsys.readouterr() == ("", "")
