"""`brain hooks on|off|status [--harness NAME]`: brain's three hooks in each agent program.

An agent program (a harness) runs `brain pack` when a session starts, `brain prime` on each
prompt and `brain settle` when a turn ends, each registered in that program's own hook config
beside whatever is there (brain.agent_hooks edits the files and knows each program's events).
`on` registers them for Claude Code and for every other harness found on this machine (its
config folder or its program on PATH), or for the one `--harness` names; `off` removes brain's
entries from every harness (or the named one) and nothing else; `status` says which are on, and
for VS Code (which keeps none of its own and runs Claude Code's and Copilot CLI's) which it runs.
"""

from __future__ import annotations

from dataclasses import dataclass

from brain import agent_hooks
from brain.agent_hooks import AgentHooks, HarnessState
from brain.errors import UsageError

HARNESSES = tuple(agent_hooks.AGENTS)


@dataclass(frozen=True)
class HooksResult:
    action: str  # on | off
    harnesses: tuple[AgentHooks, ...]


@dataclass(frozen=True)
class HooksStatus:
    harnesses: tuple[HarnessState, ...]


def check_harness(harness: str | None) -> None:
    if harness is not None and harness not in HARNESSES:
        raise UsageError(
            f"--harness {harness} is not one of {', '.join(HARNESSES)}",
            "pass one of them, or leave --harness out for every harness found",
        )


def wanted(harness: str | None = None) -> list[str]:
    """The harnesses `on` registers: the named one, else Claude Code (brain's first agent, as
    `brain install` always did) and every other found on this machine."""
    check_harness(harness)
    if harness:
        return [harness]
    return [n for n in HARNESSES if n == "claude" or agent_hooks.AGENTS[n].found()]


def switch(on: bool, harness: str | None = None) -> HooksResult:
    if on:
        done = [agent_hooks.register(n) for n in wanted(harness)]
    else:
        check_harness(harness)
        done = [agent_hooks.unregister(n) for n in ([harness] if harness else HARNESSES)]
    return HooksResult("on" if on else "off", tuple(done))


def status(harness: str | None = None) -> HooksStatus:
    """Each harness found on this machine (or named), and any other that still has brain's
    hooks or a config brain cannot read; then VS Code when it is found, whose hooks are the ones
    it runs of Claude Code's and Copilot's."""
    check_harness(harness)
    states = [agent_hooks.state(n) for n in ([harness] if harness else HARNESSES)]
    if not harness:
        by = {s.agent: s for s in states}
        vscode = agent_hooks.vscode_state(by["claude"], by["copilot"])
        states = [
            s
            for s in states
            if s.found or s.problem or {s.pack, s.prime, s.settle} & {"on", "partial"}
        ]
        states += [vscode] if vscode.found else []
    return HooksStatus(tuple(states))


def others_off() -> tuple[AgentHooks, ...]:
    """`brain uninstall`: brain's hooks out of every harness but Claude Code (reported apart).
    The ones that had none are left out of the report, and so is a config that does not parse
    where brain never wrote (its state is the user's business, not uninstall's)."""
    wrote = agent_hooks.written()
    done = [agent_hooks.unregister(n) for n in HARNESSES if n != "claude"]
    return tuple(
        d
        for d in done
        if d.action != "absent" and (d.action != "unparseable" or d.settings in wrote)
    )
