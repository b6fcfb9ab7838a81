"""The presenters of setting brain up: version, install, uninstall, hooks, update."""

from __future__ import annotations

from collections.abc import Sequence
from typing import TYPE_CHECKING, Any

from brain.present import Answer, json_text
from brain.text import noun, plural

if TYPE_CHECKING:
    from brain.commands.hooks import HooksResult, HooksStatus
    from brain.commands.install import InstallPlan, InstallResult, UninstallResult
    from brain.commands.update import UpdateResult
    from brain.commands.version import VersionResult
    from brain.mcp_server import Listening


def version(result: VersionResult, *, as_json: bool = False) -> Answer:
    if as_json:
        return Answer(json_text(result))
    commit = f" ({result.commit})" if result.commit else ""
    return Answer(f"brain {result.version}{commit}")


def _failed(harnesses: Sequence[Any]) -> tuple[str, int]:
    """The agents whose hooks could not be changed: a line each (stderr), and exit 1."""
    failed = [h for h in harnesses if h.failed]
    return "\n".join(f"brain: {h.message}" for h in failed), 1 if failed else 0


def install(result: InstallResult, *, as_json: bool = False) -> Answer:
    """What install set up, a line each; the hooks it could not put in place on stderr, exit 1:
    everything else is in place, and that must show."""
    text = json_text(result) if as_json else "\n".join(install_lines(result))
    return Answer(text, *_failed((result.claude, *result.agents)))


_PLANNED = {
    "create": "create",
    "update": "update",
    "keep": "keep",
    "remove": "remove",
    "ask": "ask, then create",
    "refuse": "could not change",
}


def install_plan(plan: InstallPlan, *, as_json: bool = False) -> Answer:
    """`brain install --dry-run`: what install would do, a line a step; it wrote nothing."""
    if as_json:
        return Answer(json_text(plan))
    lines = [f"brain install --dry-run wrote nothing. `{plan.next}` would:"]
    for step in plan.steps:
        kept = ", already in place" if step.action == "keep" else ""
        said = f" ({step.detail})" if step.detail else ""
        lines.append(f"  {_PLANNED[step.action]} the {step.what} {step.path}{kept}{said}")
    return Answer("\n".join(lines))


def uninstall(result: UninstallResult, *, as_json: bool = False) -> Answer:
    text = json_text(result) if as_json else "\n".join(uninstall_lines(result))
    return Answer(text, *_failed((result.claude, *result.agents)))


def hooks_status(state: HooksStatus, *, as_json: bool = False) -> Answer:
    return Answer(json_text(state) if as_json else "\n".join(status_lines(state)))


def hooks(result: HooksResult, *, as_json: bool = False) -> Answer:
    lines = [agent_line(h) for h in result.harnesses] + restart_lines(result.harnesses)
    text = json_text(result) if as_json else "\n".join(lines)
    return Answer(text, *_failed(result.harnesses))


def update(result: UpdateResult, *, as_json: bool = False) -> Answer:
    if as_json:
        return Answer(json_text(result))
    if result.action == "current":
        return Answer(f"brain {result.current} is the newest release; nothing to do.")
    if result.action == "available":
        return Answer(f"brain {result.current} is available (this is {result.previous}).")
    verb = "Updated" if result.action == "updated" else "Rolled back"
    lines = [f"{verb}: brain {result.previous} -> {result.current}"]
    if result.check:
        lines.append(result.check)
    note = ""
    if result.check_ok is False:
        note = (
            f"the check of brain {result.current} reported a problem; "
            f"`brain update --rollback` puts {result.previous} back"
        )
    return Answer("\n".join(lines), note)


def install_lines(r: InstallResult) -> list[str]:
    if r.created:
        how = "created: a new git repository with the starter AI/"
    elif r.git_init:
        how = "git init" + (", starter AI/ added" if r.starter else "")
    else:
        how = "starter AI/ added" if r.starter else "used as it is"
    if r.commit:
        how += f", committed as {r.commit}"
    lines = [f"Vault: {r.vault} ({how})"]
    if r.moved_from:
        lines.append(f"Moved from {r.moved_from}; its previous git hooks are back in place")
    lines.append(f"Recorded in {r.recorded}")
    link = r.path_link
    lines.append(
        {
            "created": f"PATH: linked {link.path} -> {link.target}",
            "updated": f"PATH: {link.path} now points at {link.target}",
            "kept": f"PATH: {link.path} -> {link.target} (already there)",
            "on-path": f"PATH: {link.message}",
            "exists": f"PATH: {link.path} exists",
            "failed": "PATH: no link made",
        }.get(link.action, f"PATH: {link.action}")
    )
    if link.message and link.action != "on-path":
        lines.append(f"  note: {link.message}")
    gh = r.git_hooks
    lines.append(f"Git hooks: core.hooksPath = {gh.dir} ({', '.join(gh.hooks)})")
    before = f"another tool's {gh.previous}" if gh.previous else gh.chains
    lines.append(f"  hooks in {before} and the global core.hooksPath still run first")
    ix = r.index
    bullets, files = plural(ix.bullet_count, "bullet"), plural(ix.file_count, "file")
    lines.append(f"Index: {bullets} from {files} in {ix.ms:.0f} ms")
    lines += [agent_line(h) for h in (r.claude, *r.agents)]
    lines += restart_lines((r.claude, *r.agents))
    if r.sync:
        lines.append(f"Sync: {r.sync}")
    lines.append(r.next)
    return lines


def uninstall_lines(r: UninstallResult) -> list[str]:
    lines = []
    for gh in r.git_hooks:
        if gh.action == "removed":
            back = (
                f"core.hooksPath is {gh.previous} again" if gh.previous else "core.hooksPath unset"
            )
            deleted = plural(len(gh.hooks), "hook")
            lines.append(f"Git hooks: {gh.vault}: {back}; deleted {deleted} from {gh.dir}")
        elif gh.message:
            lines.append(f"Git hooks: {gh.vault}: {gh.message}")
    if not any(gh.action == "removed" for gh in r.git_hooks):
        lines.append("Git hooks: none of brain's were installed")
    lines += [agent_line(h) for h in (r.claude, *r.agents)]
    link = r.path_link
    if link.action == "removed":
        lines.append(f"PATH: removed {link.path}")
        if link.message:
            lines.append(f"  note: {link.message}")
    elif link.message:
        lines.append(f"PATH: {link.message}")
    if r.recorded:
        lines.append(f"Forgot the vault {r.vault} (the record in {r.recorded})")
    if r.indexes:
        lines.append(
            f"Deleted every index ({plural(len(r.indexes), 'index file')}) and the cached packs "
            f"(`brain reindex` rebuilds {noun(len(r.indexes), 'it', 'them')})"
        )
    if r.workers:
        pids = ", ".join(str(p) for p in r.workers)
        stopped = plural(len(r.workers), "background worker")
        lines.append(f"Stopped {stopped} ({noun(len(r.workers), 'pid', 'pids')} {pids})")
    if r.vault:
        lines.append(f"The vault {r.vault} and its history are untouched")
    if r.left:
        import shlex

        held = _held()
        named = ", ".join(f"{p} ({held[p]})" if p in held else p for p in r.left)
        lines.append(
            f"Left in place: {named}; to remove them too: "
            f"rm -r {' '.join(shlex.quote(p) for p in r.left)}"
        )
    return lines


def _held() -> dict[str, str]:
    """What each of brain's folders holds that uninstall leaves for the person to delete: the
    data dir holds no settings but the model's cache and, from install.sh, brain itself."""
    from brain import config

    held: dict[str, str] = {}
    for folder, what in (
        (config.state_dir(), "your lookup log and recall's transcripts.db"),
        (config.config_dir(), "brain.yaml and recall's opt-ins"),
        (
            config.data_dir(),
            "the embedding model's cache and the environment install.sh installs brain into",
        ),
    ):  # one folder on macOS (platformdirs: Application Support): it holds all three
        held[str(folder)] = f"{held[str(folder)]}; {what}" if str(folder) in held else what
    return held


def agent_line(h: Any) -> str:
    """One line for what happened to brain's hooks in one agent's config."""
    from brain.agent_hooks import AGENTS

    label = AGENTS[h.agent].label
    hooks = f" ({', '.join(h.hooks)})" if h.hooks else ""
    done = {
        "added": f"brain's hooks added to {h.settings}{hooks}",
        "updated": f"brain's hooks updated in {h.settings}{hooks}",
        "present": f"brain's hooks already in {h.settings}",
        "removed": f"removed brain's hooks from {h.settings}{hooks}",
        "absent": f"no brain hooks in {h.settings}",
    }
    return f"{label}: {done.get(h.action, f'not changed ({h.action}; see below)')}"


def restart_lines(harnesses: Sequence[Any]) -> list[str]:
    """The agents whose hooks were just added or changed, to restart: a running session keeps the
    hooks it started with (Claude Code's hooks reference, "Configuration safety": a snapshot of
    the hooks is taken at startup and used for the whole session)."""
    from brain.agent_hooks import AGENTS

    changed = [AGENTS[h.agent].label for h in harnesses if h.action in ("added", "updated")]
    if not changed:
        return []
    from brain.text import listed

    who = listed(changed)
    if len(changed) == 1:
        return [f"  restart {who} if it is running: it reads its hooks when it starts"]
    return [f"  restart {who} if they are running: each reads its hooks when it starts"]


def status_lines(state: HooksStatus) -> list[str]:
    if not state.harnesses:
        return ["No agent program found (Claude Code, Codex CLI, Gemini CLI, Copilot CLI, VS Code)"]
    lines = []
    for s in state.harnesses:
        where = "" if s.found else " (not found on this machine)"
        if s.problem:
            lines.append(f"{s.label}{where}: {s.problem}")
        else:
            on = ", ".join(f"{role} {getattr(s, role)}" for role in ("pack", "prime", "settle"))
            lines.append(f"{s.label}{where}: {on} in {s.settings}")
        if s.note:
            lines.append(f"  note: {s.note}")
    return lines


def mcp_http(on: Listening) -> str:
    """What `brain mcp --http` says on stderr as it starts: where, and the commands that register
    it with Claude Code and Codex, each reading the token from its file (the token itself is never
    printed: a terminal's scrollback and a shell's history keep what they are shown)."""
    import shlex

    cat = f"$(cat {shlex.quote(str(on.token_file))})"
    lines = []
    if not on.loopback:
        lines.append(
            f"brain: warning: listening on {on.host}, not loopback: any machine that reaches this "
            "port may try the token, which plain HTTP carries unencrypted; serve it on a network "
            "you trust, or keep the default and reach it through an SSH tunnel."
        )
    lines += [
        f"brain mcp: serving brain's tools at {on.url}",
        f"Its token is in {on.token_file} (yours only; delete the file for a new one).",
        f"Clients may call it {', '.join(on.hosts)} (more with --allow-host NAME).",
        "Claude Code:",
        f'  claude mcp add --transport http brain {on.url} --header "Authorization: Bearer {cat}"',
        f"Codex (reads the token from ${on.token_variable} when it starts):",
        f"  codex mcp add brain --url {on.url} --bearer-token-env-var {on.token_variable}",
        f'  {on.token_variable}="{cat}" codex',
        "Ctrl-C stops it.",
    ]
    return "\n".join(lines)
