from __future__ import annotations

from brain.cli import main

main()
