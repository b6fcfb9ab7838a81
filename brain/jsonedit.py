"""Edit a JSON document as text, so that everything brain does not change stays byte for byte.

Agents' settings files (Claude Code's settings.json, Codex's hooks.json) are the user's: their key
order, indent, inline arrays and line ends are theirs. `json.loads` + `json.dumps` would re-indent
the whole file to change one entry, so edits here work on the text: a member or an element is
inserted after its last sibling (with that sibling's leading whitespace), deleted with its
separator, or replaced where it stands, and only the new value is rendered (in the file's indent).

A path is a sequence of object keys and array indices from the top, e.g. ("hooks", "SessionStart",
0). Every function takes text that `json.loads` accepts.
"""

from __future__ import annotations

import json
import re
from collections.abc import Sequence
from dataclasses import dataclass, field
from typing import Any

_WS = re.compile(r"[ \t\n\r]*")
_decoder = json.JSONDecoder()
Path = Sequence[str | int]


@dataclass
class Node:
    start: int  # the value's first character (a member's key for `lead`, see below)
    end: int  # one past its last character
    depth: int
    kind: str  # "object" | "array" | "scalar"
    keys: list[str] = field(default_factory=list)  # objects: member keys, in order
    key_starts: list[int] = field(default_factory=list)  # objects: where each key's quote opens
    children: list[Node] = field(default_factory=list)


def _skip(text: str, i: int) -> int:
    m = _WS.match(text, i)
    return m.end() if m else i


def _node(text: str, i: int, depth: int) -> Node:
    i = _skip(text, i)
    opener = text[i]
    if opener not in "{[":
        _, end = _decoder.raw_decode(text, i)
        return Node(i, end, depth, "scalar")
    node = Node(i, i, depth, "object" if opener == "{" else "array")
    closer = "}" if opener == "{" else "]"
    j = _skip(text, i + 1)
    if text[j] == closer:
        node.end = j + 1
        return node
    while True:
        if node.kind == "object":
            key, after = _decoder.raw_decode(text, j)
            node.keys.append(key)
            node.key_starts.append(j)
            j = _skip(text, after) + 1  # past the colon
        child = _node(text, j, depth + 1)
        node.children.append(child)
        j = _skip(text, child.end)
        if text[j] == closer:
            node.end = j + 1
            return node
        j = _skip(text, j + 1)  # past the comma


def scan(text: str) -> Node:
    """The layout of `text` (valid JSON): where every value starts and ends."""
    return _node(text, 0, 0)


def _index(node: Node, step: str | int) -> int | None:
    if node.kind == "object" and isinstance(step, str):
        # a repeated key: json.loads keeps the last one, and so does this
        hits = [k for k, key in enumerate(node.keys) if key == step]
        return hits[-1] if hits else None
    if node.kind == "array" and isinstance(step, int) and 0 <= step < len(node.children):
        return step
    return None


def find(text: str, path: Path) -> Node | None:
    node = scan(text)
    for step in path:
        k = _index(node, step)
        if k is None:
            return None
        node = node.children[k]
    return node


@dataclass(frozen=True)
class Style:
    indent: int | str | None  # spaces, a tab, or None for a one-line file
    newline: str


def style(text: str) -> Style:
    """The file's indent unit (from its first indented line) and line end."""
    newline = "\r\n" if "\r\n" in text else "\n"
    m = re.search(r"\n([ \t]+)\S", text)
    if m is None:  # one line; an empty `{}` has no style to keep and gets json.dumps's indent 2
        return Style(2 if re.fullmatch(r"\s*(\{\s*\}|\[\s*\])?\s*", text) else None, newline)
    ws = m.group(1)
    return Style(ws if "\t" in ws else len(ws), newline)


def render(value: Any, depth: int, st: Style) -> str:
    """`value` as JSON text to stand at `depth`, in the file's style."""
    if st.indent is None:
        return json.dumps(value, ensure_ascii=False)
    text = json.dumps(value, indent=st.indent, ensure_ascii=False)
    unit = st.indent if isinstance(st.indent, str) else " " * st.indent
    return text.replace("\n", st.newline + unit * depth)


def _member(node: Node, key: str | None, value: Any, st: Style) -> str:
    rendered = render(value, node.depth + 1, st)
    if key is None:
        return rendered
    return f"{json.dumps(key, ensure_ascii=False)}: {rendered}"


def _lead(node: Node, k: int) -> int:
    """Where child `k` begins: its key for an object member."""
    return node.key_starts[k] if node.kind == "object" else node.children[k].start


def _container(text: str, path: Path) -> Node:
    node = find(text, path)
    if node is None or node.kind == "scalar":
        raise KeyError(f"no object or array at {list(path)}")
    return node


def append(text: str, path: Path, value: Any, key: str | None = None) -> str:
    """Add `value` at the end of the array at `path`, or as member `key` of the object there."""
    node = _container(text, path)
    st = style(text)
    if not node.children:  # `{}` or `[]`: nothing of the user's inside to keep
        new: Any = {key: value} if node.kind == "object" else [value]
        return text[: node.start] + render(new, node.depth, st) + text[node.end :]
    last = len(node.children) - 1
    before = _lead(node, last)
    # the whitespace before the last sibling, after its comma or the opening bracket
    sep_start = before
    while sep_start > node.start + 1 and text[sep_start - 1] in " \t\r\n":
        sep_start -= 1
    lead = text[sep_start:before]
    if not lead and last == 0:
        lead = " "  # `{"a": 1}`: after the comma, as json.dumps spaces it
    end = node.children[last].end
    return text[:end] + "," + lead + _member(node, key, value, st) + text[end:]


def delete(text: str, path: Path) -> str:
    """Remove the member or element at `path` and its separator."""
    if not path:
        raise KeyError("cannot delete the whole document")
    parent = _container(text, path[:-1])
    k = _index(parent, path[-1])
    if k is None:
        raise KeyError(f"nothing at {list(path)}")
    if len(parent.children) == 1:
        empty = "{}" if parent.kind == "object" else "[]"
        return text[: parent.start] + empty + text[parent.end :]
    if k + 1 < len(parent.children):  # up to the next sibling: takes this one's comma along
        return text[: _lead(parent, k)] + text[_lead(parent, k + 1) :]
    return text[: parent.children[k - 1].end] + text[parent.children[k].end :]


def replace(text: str, path: Path, value: Any) -> str:
    """Put `value` where the value at `path` stands."""
    node = find(text, path)
    if node is None:
        raise KeyError(f"nothing at {list(path)}")
    return text[: node.start] + render(value, node.depth, style(text)) + text[node.end :]
