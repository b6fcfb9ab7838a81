"""One error type that always carries the next step."""

from __future__ import annotations


class BrainError(Exception):
    """A failure the user can act on: `message` says what went wrong, `hint` what to do next."""

    exit_code = 1

    def __init__(self, message: str, hint: str = "") -> None:
        super().__init__(message)
        self.message = message
        self.hint = hint

    def __str__(self) -> str:
        return f"{self.message} ({self.hint})" if self.hint else self.message


class UsageError(BrainError):
    """The command line itself is wrong (exit 2, as argument parsers do)."""

    exit_code = 2
