from __future__ import annotations

try:
    from brain.thin import main
except KeyboardInterrupt:  # a Ctrl-C while brain loads: the one line any other Ctrl-C gets
    import sys

    sys.stderr.write("brain: interrupted\n")
    raise SystemExit(130) from None

main()
