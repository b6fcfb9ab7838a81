from __future__ import annotations

from brain.thin import main

main()
