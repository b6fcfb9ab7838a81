"""What a hostile tester found still breaking through the real CLI, each pinned by a test.

Credentials are built at run time (test_masking's seeded generator): no token literal lives here.
"""

from __future__ import annotations

from pathlib import Path

from conftest import brain
from test_masking import PASSWORD, assert_masked


def test_a_password_wrapped_onto_the_next_line_is_masked_and_named(git_vault: Path) -> None:
    # Hard-wrapped prose: the index joins the two lines into one unit, so the key name and its
    # value meet there; `brain secrets` must name the line before a commit, find must mask it.
    note = git_vault / "notes" / "okapi-wrap.md"
    note.write_text(f"# Okapi\n\nFor the okapi move the staging password is\n{PASSWORD} for now.\n")
    v = ("--vault", str(git_vault))
    for fmt in ("--raw", "--json", "--terse"):
        run = brain("find", *v, fmt, "okapi staging")
        assert run.code == 0, run
        assert "okapi" in run.out
        assert_masked(run.out + run.err, fmt)
    scan = brain("secrets", *v, "notes/okapi-wrap.md")
    assert scan.code == 1, scan
    assert "notes/okapi-wrap.md:3: generic-password" in scan.out + scan.err
