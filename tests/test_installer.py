# ruff: noqa: F811  (fixtures shared with test_update.py are imported by name)
"""The installers and the release workflow (`just test-installer`).

install.sh runs for real, under sh and bash, in a temp HOME against the release server of
tests/test_update.py on 127.0.0.1; install.ps1 only where pwsh is installed. The installers
repeat the release base URL and public keys that brain/release.py owns: checked here to agree.
"""

from __future__ import annotations

import json
import os
import re
import shutil
import subprocess
import sys
from pathlib import Path

import pytest
import yaml
from conftest import ROOT
from test_update import (  # the shared release fixtures
    NEW,
    OLD,
    Key,
    Release,
    Server,
    deps_farm,  # noqa: F401
    releases,  # noqa: F401
    server,  # noqa: F401
    srv,  # noqa: F401
    test_key,  # noqa: F401
)

from brain import release

pytestmark = pytest.mark.slow  # the installers for real against a release server

TEST_KEY: list[str] = []  # the session's throwaway public key, set by the autouse fixture below


@pytest.fixture(autouse=True)
def _remember_test_key(test_key: Key) -> None:
    TEST_KEY[:] = [test_key.public]


INSTALL_SH = ROOT / "install.sh"
INSTALL_PS1 = ROOT / "install.ps1"
WORKFLOWS = ROOT / ".github" / "workflows"


# --- the three agree ------------------------------------------------------------------------------


def _sh_value(name: str) -> str:
    m = re.search(rf'^{name}="([^"]*)"$', INSTALL_SH.read_text(), re.MULTILINE)
    assert m, f"install.sh sets no {name}"
    return m[1]


def _ps1_value(name: str) -> str:
    m = re.search(rf"^\${name} = (.*)$", INSTALL_PS1.read_text(), re.MULTILINE)
    assert m, f"install.ps1 sets no ${name}"
    return m[1]


def test_installers_repeat_the_release_base_url() -> None:
    assert _sh_value("BRAIN_BASE_URL") == release.BASE_URL
    assert _ps1_value("BrainBaseUrl") == f'"{release.BASE_URL}"'


def test_installers_repeat_the_public_keys() -> None:
    assert tuple(_sh_value("BRAIN_PUBLIC_KEYS").split()) == release.PUBLIC_KEYS
    assert tuple(re.findall(r'"([^"]+)"', _ps1_value("BrainPublicKeys"))) == release.PUBLIC_KEYS


def test_installers_put_the_bin_folder_on_path_before_brain_install() -> None:
    """brain install's PATH hint reads what the installer wrote (a profile line, the user's
    PATH): both installers must write it first, or the hint tells the user to add it by hand."""
    sh = INSTALL_SH.read_text()
    assert sh.index("added by brain") < sh.index('"$BRAIN" install')
    ps = INSTALL_PS1.read_text()
    assert ps.index('SetEnvironmentVariable("Path"') < ps.index("& $Brain install")


def test_installers_know_the_tag_grammar() -> None:
    sh = re.search(r"grep -Eq '\^(.*)\$'", INSTALL_SH.read_text())
    ps = re.search(r"-notmatch '\^(.*)\$'", INSTALL_PS1.read_text())
    assert sh
    assert ps
    for tag in (
        "dev-2026-09",
        "dev-2026-09a",
        "dev-2026-09-rc2",
        "dev-2026-13",
        "v1.0",
        "dev-26-1",
    ):
        want = release.parse_tag(tag) is not None
        assert bool(re.fullmatch(sh[1].replace("[0-9]", r"\d"), tag)) is want, tag
        assert bool(re.fullmatch(ps[1], tag)) is want, tag


def test_install_sh_is_valid_sh_and_bash() -> None:
    checks = [[shell, "-n"] for shell in ("sh", "bash") if shutil.which(shell)]
    if shutil.which("shellcheck"):
        checks.append(["shellcheck", "-s", "sh"])
    assert checks, "no sh, bash or shellcheck to check install.sh with"
    for check in checks:
        proc = subprocess.run(
            [*check, str(INSTALL_SH)], capture_output=True, text=True, check=False
        )
        assert proc.returncode == 0, proc.stdout + proc.stderr


# --- the workflow ---------------------------------------------------------------------------------


def _load(path: Path) -> dict[object, object]:
    doc = yaml.safe_load(path.read_text())
    assert isinstance(doc, dict)
    return doc


def test_workflows_pass_actionlint_where_installed() -> None:
    tool = shutil.which("actionlint")
    if tool is None:
        pytest.skip("actionlint is not installed (its PyPI wrapper downloads it at build time)")
    subprocess.run([tool, *map(str, sorted(WORKFLOWS.glob("*.yml")))], check=True)


def test_release_workflow_builds_signs_and_publishes_on_calendar_tags() -> None:
    doc = _load(WORKFLOWS / "release.yml")
    trigger = doc.get("on", doc.get(True))  # YAML 1.1 reads a bare `on` as true
    assert isinstance(trigger, dict)
    assert trigger == {"push": {"tags": ["dev-*"]}}
    jobs = doc["jobs"]
    assert isinstance(jobs, dict)
    (job,) = jobs.values()
    assert job["permissions"] == {"contents": "write"}
    steps = job["steps"]
    for step in steps:
        assert ("uses" in step) != ("run" in step), step
        if "uses" in step:
            assert re.fullmatch(r"[\w.-]+/[\w.-]+@v\d+", step["uses"]), step["uses"]
    runs = "\n".join(s.get("run", "") for s in steps)
    assert "tools/build_release.py check-tag" in runs
    assert "tools/build_release.py build" in runs
    assert "--prerelease --latest=false" in runs
    assert "gh release create" in runs
    secrets = [s for s in steps if "BRAIN_SIGNING_KEY" in (s.get("env") or {})]
    assert len(secrets) == 1
    assert secrets[0]["env"]["BRAIN_SIGNING_KEY"] == "${{ secrets.BRAIN_SIGNING_KEY }}"
    # untrusted input (the tag) reaches scripts through env, never pasted into them
    assert "${{ github.ref_name }}" not in runs
    for name in ("ci.yml", "release.yml"):
        if (WORKFLOWS / name).exists():
            assert _load(WORKFLOWS / name)["jobs"]


@pytest.mark.parametrize(
    ("tag", "kind"),
    [("dev-2026-09", "release"), ("dev-2026-09b", "release"), ("dev-2026-09-rc1", "prerelease")],
)
def test_build_tool_classifies_tags(tag: str, kind: str) -> None:
    proc = subprocess.run(
        [sys.executable, str(ROOT / "tools" / "build_release.py"), "check-tag", tag],
        capture_output=True,
        text=True,
        check=False,
    )
    assert (proc.returncode, proc.stdout.strip()) == (0, kind)


def test_build_tool_refuses_a_bad_tag() -> None:
    proc = subprocess.run(
        [sys.executable, str(ROOT / "tools" / "build_release.py"), "check-tag", "v1.2.3"],
        capture_output=True,
        text=True,
        check=False,
    )
    assert proc.returncode == 1


# --- install.sh for real ------------------------------------------------------------------------


def _trusting(text: str, key: str) -> str:
    """The installer as a release made with the test's key would ship it: that key compiled in,
    the way tools/build_release.py --public-key compiles it into the wheels under test."""
    new, n = re.subn(r'^BRAIN_PUBLIC_KEYS="[^"]*"$', f'BRAIN_PUBLIC_KEYS="{key}"', text, flags=re.M)
    assert n == 1
    return new


def _run_sh(
    shell: str, home: Path, srv: Server, farm: Path, *args: str, **env: str
) -> subprocess.CompletedProcess[str]:
    script = home.parent / "dl" / "install.sh"  # as downloaded: outside any checkout
    script.parent.mkdir(exist_ok=True)
    script.write_text(_trusting(INSTALL_SH.read_text(), TEST_KEY[0]))
    path = os.pathsep.join(p for p in os.environ["PATH"].split(os.pathsep) if ".local/bin" not in p)
    full = {
        **os.environ,
        "PATH": path,
        "SHELL": "/bin/bash",
        "BRAIN_RELEASE_URL": srv.url,
        "BRAIN_NO_UV": "1",
        "BRAIN_PYTHON": sys.executable,
        "PYTHONPATH": str(farm),  # the venv finds brain's dependencies here: no network
        "PIP_NO_INDEX": "1",
        **env,
    }
    return subprocess.run(
        [shell, str(script), *args],
        capture_output=True,
        text=True,
        env=full,
        cwd=home,
        timeout=300,
        check=False,
    )


def _deps(farm: Path) -> dict[str, str]:
    return {**os.environ, "PYTHONPATH": str(farm)}


def _venv(home: Path) -> Path:
    return home / ".local" / "share" / "brain" / "venv"


def test_install_sh_installs_the_latest_release_links_it_and_makes_a_vault(
    isolated_env: Path, srv: Server, releases: dict[str, Release], deps_farm: Path
) -> None:
    home = isolated_env
    srv.publish(releases[OLD], latest=False)
    srv.publish(releases[NEW])
    run = _run_sh("sh", home, srv, deps_farm)
    assert run.returncode == 0, run.stderr
    assert "signature verified" in run.stderr
    venv = _venv(home)
    link = home / ".local" / "bin" / "brain"
    assert link.is_symlink()
    assert Path(os.path.realpath(link)) == (venv / "bin" / "brain").resolve()
    version = subprocess.run(
        [str(link), "version", "--json"],
        capture_output=True,
        text=True,
        env=_deps(deps_farm),
        check=False,
    )
    assert version.returncode == 0, version.stderr
    assert json.loads(version.stdout)["version"] == NEW
    marker = json.loads((venv / "brain-install.json").read_text())
    assert marker["installer"] == "install.sh"
    assert marker["method"] == "venv"
    assert marker["current"]["tag"] == NEW
    assert Path(marker["current"]["wheel"]).is_file()
    assert (home / "Documents" / "Brain" / "AI").is_dir()  # `brain install` made a vault
    bashrc = (home / ".bashrc").read_text()
    assert f'export PATH="{home}/.local/bin:$PATH"' in bashrc
    assert f"added {home}/.local/bin to PATH in {home}/.bashrc" in run.stderr  # said so
    again = _run_sh("sh", home, srv, deps_farm)  # idempotent: the profile is edited once
    assert again.returncode == 0, again.stderr
    assert (home / ".bashrc").read_text() == bashrc


def test_install_sh_pins_a_version_and_can_leave_profiles_alone(
    isolated_env: Path, srv: Server, releases: dict[str, Release], deps_farm: Path
) -> None:
    home = isolated_env
    bindir = home / "bin"
    srv.publish(releases[OLD], latest=False)
    srv.publish(releases[NEW])
    run = _run_sh(
        "bash",
        home,
        srv,
        deps_farm,
        "--no-modify-path",
        BRAIN_VERSION=OLD,
        BRAIN_BINDIR=str(bindir),
    )
    assert run.returncode == 0, run.stderr
    assert not (home / ".bashrc").exists()
    assert not (home / ".profile").exists()
    assert f"{bindir} is not on PATH" in run.stderr
    version = subprocess.run(
        [str(bindir / "brain"), "version"],
        capture_output=True,
        text=True,
        env=_deps(deps_farm),
        check=False,
    )
    assert version.stdout.startswith(f"brain {OLD} ")


@pytest.mark.parametrize("what", ["wheel", "signature"])
def test_install_sh_refuses_a_tampered_release(
    what: str,
    isolated_env: Path,
    srv: Server,
    releases: dict[str, Release],
    deps_farm: Path,
    test_key: object,
) -> None:
    home = isolated_env
    new = releases[NEW]
    if what == "wheel":
        data = bytearray((new.folder / new.wheel).read_bytes())
        data[100] ^= 0xFF
        srv.publish(new, **{new.wheel.replace(".", "__"): bytes(data)})
    else:
        srv.publish(new, sha256sums__txt__sig=b"\0" * 64)
    run = _run_sh("sh", home, srv, deps_farm, BRAIN_NO_MODIFY_PATH="1")
    assert run.returncode == 1
    says = "does not match its sha256" if what == "wheel" else "not signed by brain's release key"
    assert says in run.stderr
    assert "nothing was installed" in run.stderr
    assert not _venv(home).exists()


def test_install_ps1_where_pwsh_exists(
    isolated_env: Path, srv: Server, releases: dict[str, Release], deps_farm: Path
) -> None:
    pwsh = shutil.which("pwsh")
    if pwsh is None:
        pytest.skip("pwsh is not installed")
    home = isolated_env
    srv.publish(releases[NEW])
    script = home.parent / "dl-ps" / "install.ps1"
    script.parent.mkdir(exist_ok=True)
    shutil.copy2(INSTALL_PS1, script)
    env = {
        **os.environ,
        "BRAIN_RELEASE_URL": srv.url,
        "BRAIN_NO_UV": "1",
        "BRAIN_PYTHON": sys.executable,
        "PYTHONPATH": str(deps_farm),
        "PIP_NO_INDEX": "1",
        "BRAIN_NO_MODIFY_PATH": "1",
    }
    run = subprocess.run(
        [pwsh, "-NoProfile", "-File", str(script)],
        capture_output=True,
        text=True,
        env=env,
        timeout=300,
        check=False,
    )
    assert run.returncode == 0, run.stderr


def test_the_windows_path_hint_reads_the_user_path_not_a_shell_profile(tmp_path: Path) -> None:
    """Windows has no shell profile: the hint names the user's PATH, and once install.ps1 has
    put the folder there (the registry a new terminal reads) it says to open a new terminal."""
    from brain.commands.install import windows_path_hint

    folder = tmp_path / "bin"
    missing = windows_path_hint(folder, r"C:\Windows;C:\tools")
    assert "user PATH" in missing
    assert "Environment Variables" in missing
    assert "profile" not in missing
    assert "export" not in missing
    held = windows_path_hint(folder, rf"C:\Windows;{folder};")
    assert held == f"{folder} is on your user PATH but not yet this terminal's: open a new terminal"
