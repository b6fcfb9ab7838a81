"""Recall: search what was actually said, across every agent's transcripts.

Transcripts are not vault content. They are machine-written, owned by other programs and never
committed, so they live in their own database (`transcripts.db` in the state dir) behind
`brain recall`, and nothing about them reaches the Markdown. `adapters` reads each agent's
format, `store` ingests incrementally, `search` ranks.
"""

# How brain's hints spell recall's subcommands (the old option spellings, `--full ID`, `--sync`,
# `--sources`, `--enable NAME`, still work, but a hint teaches the current one).
FULL = "brain recall full ID"
SYNC = "brain recall sync"
SOURCES = "brain recall sources"


def enable_command(agent: str = "NAME") -> str:
    """The command that opts an agent's transcripts in: `brain recall enable claude`."""
    return f"brain recall enable {agent}"
