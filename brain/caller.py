"""Who is asking: an agent (terse output, logged by name) or a person at a terminal."""

from __future__ import annotations

import sys
from dataclasses import dataclass

# The name each agent program is logged under (the usage log's caller, `brain ledger`), by the
# harness name brain.hook_event gives the program a hook's payload comes from.
CALLERS = {
    "claude": "claude-code",
    "codex": "codex",
    "gemini": "gemini-cli",
    "copilot": "copilot-cli",
    "vscode": "vscode",
}
# Agents that announce themselves in the environment of the commands they run. Codex sets
# CODEX_THREAD_ID in every command's environment and CODEX_SANDBOX(_NETWORK_DISABLED) only under
# a sandbox (openai/codex codex-rs/protocol/src/shell_environment.rs, populate_env; core's
# spawn.rs); its users' own CODEX_HOME or CODEX_API_KEY say nothing of who runs brain. AI_AGENT is
# the name-neutral one some agents set (Claude Code besides CLAUDECODE; agentsmd/agents.md#136).
_AGENT_VARS = (
    ("CLAUDECODE", CALLERS["claude"]),
    ("GEMINI_CLI", CALLERS["gemini"]),
    ("CODEX_SANDBOX", CALLERS["codex"]),
    ("CODEX_THREAD_ID", CALLERS["codex"]),
    ("CODEX_SANDBOX_NETWORK_DISABLED", CALLERS["codex"]),
    ("CURSOR_AGENT", "cursor"),
    ("AI_AGENT", "agent"),
)
_SESSION_VARS = ("CLAUDE_SESSION_ID", "CLAUDE_CODE_SESSION_ID")  # after BRAIN_SESSION


MCP_CALLER = "mcp:"  # an MCP client's name follows it (brain.mcp_server.Server.caller)


@dataclass(frozen=True)
class Caller:
    name: str  # "claude-code", BRAIN_CALLER's value, "person", or "script"
    session: str
    agent: bool  # wants terse lines rather than a listing for the eye

    @property
    def person(self) -> bool:
        return not self.agent


def detect(harness: str = "") -> Caller:
    """The caller: BRAIN_CALLER when set; else the program a hook event on stdin came from
    (`harness`, as brain.hook_event names it), which the environment cannot tell (Codex started
    from a Claude Code session inherits its CLAUDECODE, and VS Code runs Claude Code's hooks);
    else an agent's own variable, a terminal's person, or a script."""
    from brain.settings import current

    said = current()
    env = said.env
    session = said.session or next((env[v] for v in _SESSION_VARS if env.get(v)), "")
    if said.caller:
        return Caller(said.caller, session, agent=True)
    if harness:
        return Caller(CALLERS.get(harness, harness), session, agent=True)
    for var, name in _AGENT_VARS:
        if env.get(var):
            return Caller(name, session, agent=True)
    if sys.stdout.isatty():
        return Caller("person", session, agent=False)
    return Caller("script", session, agent=True)
