"""`brain sync status` dates the remote's count by the last fetch that worked
(brain.autosync.fetched), attacked: the sync state file is brain's own, but a crash, a disk
filling up or a person's editor may leave anything in it. Real clones of one bare remote, real
`brain` subprocesses (tests/test_sync.py's pair).
"""

from __future__ import annotations

import json
from pathlib import Path
from typing import Any

import pytest
from test_sync import Machine, pair, remote

from brain import autosync

__all__ = ["pair", "remote"]  # the fixtures, imported for pytest
GOOD = 1_765_000_000.0  # a time a pass could have kept (December 2025)


@pytest.mark.parametrize(
    "doc",
    [
        {"fetched": "yesterday"},
        {"fetched": float("nan")},
        {"fetched": float("inf")},
        {"fetched": 1e300},
        {"fetched": -1e300},
        {"fetched": True},
        {"fetched": GOOD, "offline_until": "soon"},
        {"fetched": GOOD, "offline_until": float("nan")},
        {"offline_until": 1e300},
        {"offline_until": [1]},
    ],
    ids=repr,
)
def test_status_reads_a_state_file_holding_anything(
    pair: tuple[Machine, Machine],
    remote: Path,
    monkeypatch: pytest.MonkeyPatch,
    doc: dict[str, Any],
) -> None:
    """A value status cannot use is no date (not a traceback, not 1970): the rest is said."""
    _, b = pair
    b.sync()
    remote.rename(remote.with_name("gone.git"))
    assert b.sync(code=1)["outcome"] == "offline"  # its fetch emptied FETCH_HEAD
    b.activate(monkeypatch)
    path = autosync.state_path(b.vault)
    path.parent.mkdir(parents=True, exist_ok=True)
    path.write_text(json.dumps(doc), encoding="utf-8")  # NaN and Infinity as json.dumps writes
    run = b.brain("sync", "status", "--vault", str(b.vault), "--json")
    assert "Traceback" not in run.err, run.err
    assert run.code == 0, run
    said = run.json()
    good = doc.get("fetched") == GOOD
    assert said["fetched_at"] == (autosync.iso(GOOD) if good else None)
    assert said["retry_at"] is None
    plain = b.brain("sync", "status", "--vault", str(b.vault))
    assert plain.code == 0, plain
    # the hooks' check and a background pass read the same back-off: never an internal error
    monkeypatch.setattr(autosync, "_spawn", lambda vault, mode: True)  # no pass left running
    assert autosync.background(b.vault, "send") in (True, False)
    quiet = b.brain("sync", "--background", "send", "--vault", str(b.vault), "--json")
    assert "Traceback" not in quiet.err, quiet.err
    assert quiet.json()["outcome"] == "offline", quiet
