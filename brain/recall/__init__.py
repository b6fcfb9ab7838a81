"""Recall: search what was actually said, across every agent's transcripts.

Transcripts are not vault content. They are machine-written, owned by other programs and never
committed, so they live in their own database (`transcripts.db` in the state dir) behind
`brain recall`, and nothing about them reaches the Markdown. `adapters` reads each agent's
format, `store` ingests incrementally, `search` ranks.
"""
