"""Where brain keeps things, and who may read them."""

from __future__ import annotations

import stat
import sys
from pathlib import Path

import platformdirs
import pytest
from conftest import FIXTURE_VAULT, brain

from brain import config


def _mode(path: Path) -> int:
    return stat.S_IMODE(path.stat().st_mode)


def test_the_state_dir_and_what_brain_creates_in_it_are_the_owner_s_alone(
    tmp_path: Path,
) -> None:
    assert brain("find", "--vault", str(FIXTURE_VAULT), "payments").code == 0  # index, usage log
    assert brain("pack", "--vault", str(FIXTURE_VAULT), "payments").code == 0  # pack cache
    state = config.state_dir()
    assert _mode(state) == 0o700
    made = [p for p in state.rglob("*") if p.is_file()]
    assert {p.name for p in made} >= {"usage.sqlite", config.index_path(FIXTURE_VAULT).name}
    assert any(p.suffix == ".json" for p in made)  # the cached pack
    for path in made:
        assert _mode(path) & 0o077 == 0, path


def test_a_state_dir_made_open_by_an_older_brain_is_closed(isolated_env: Path) -> None:
    state = isolated_env / ".local" / "state" / "brain"
    state.mkdir(parents=True)
    state.chmod(0o755)
    assert brain("find", "--vault", str(FIXTURE_VAULT), "payments").code == 0
    assert _mode(state) == 0o700


@pytest.mark.skipif(sys.platform != "linux", reason="brain works the folders out itself on Linux")
@pytest.mark.parametrize(
    "env",
    [
        {},
        {"XDG_STATE_HOME": "", "XDG_CONFIG_HOME": "", "XDG_DATA_HOME": ""},
        {"XDG_STATE_HOME": "relative/state", "XDG_CONFIG_HOME": "cfg", "XDG_DATA_HOME": "d"},
        {"XDG_STATE_HOME": "/abs/state/", "XDG_CONFIG_HOME": "/abs//cfg", "XDG_DATA_HOME": "/d"},
        {"HOME": "/home/someone/"},
        {"HOME": "/"},
    ],
)
def test_linux_folders_are_platformdirs_folders(
    env: dict[str, str], monkeypatch: pytest.MonkeyPatch
) -> None:
    for name in ("XDG_STATE_HOME", "XDG_CONFIG_HOME", "XDG_DATA_HOME"):
        monkeypatch.delenv(name, raising=False)
    for name, value in env.items():
        monkeypatch.setenv(name, value)
    assert config._user_dir("state") == Path(platformdirs.user_state_dir("brain", False))
    assert config.config_dir() == Path(platformdirs.user_config_dir("brain", False))
    assert config.data_dir() == Path(platformdirs.user_data_dir("brain", False))
