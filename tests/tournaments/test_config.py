"""The tournament file: valid files load with paths made absolute; bad ones name the bad key."""

from __future__ import annotations

from pathlib import Path

import pytest

from tournaments.config import ConfigError, Gauntlet, load_config

GOOD = """
name = "cup"
game = "opposing-force"
seed = 7
output = "out/cup"

[[bots]]
spec = "example:opposing-force"
[[bots]]
name = "mine"
spec = "mine.py"

[format]
kind = "gauntlet"
challengers = ["mine"]
games_per_pairing = 4

[time_control]
decision_ms = 200

[policies]
timeout = "random"

[run]
concurrency = 3
"""

BOT = (
    "from arena_sdk.bot import Bot\nclass Mine(Bot):\n    def act(self, o, l):\n        return 0\n"
)


def write(tmp_path: Path, text: str) -> Path:
    (tmp_path / "mine.py").write_text(BOT)
    path = tmp_path / "cup.toml"
    path.write_text(text)
    return path


def test_a_good_file_loads_with_paths_relative_to_it(tmp_path: Path) -> None:
    config = load_config(write(tmp_path, GOOD))
    assert config.bot_names() == ["opposing-force", "mine"]
    assert config.bots[1].spec == str((tmp_path / "mine.py").resolve())
    assert config.output == str((tmp_path / "out/cup").resolve())
    assert isinstance(config.format, Gauntlet) and config.format.challengers == ["mine"]
    settings = config.settings()
    assert settings.decision_ms == 200 and settings.policies.timeout == "random"
    assert config.run.concurrency == 3


@pytest.mark.parametrize(
    ("change", "message"),
    [
        (("seed = 7", "seed = 'x'"), "seed: Input should be a valid integer"),
        (('game = "opposing-force"', 'game = "chess"'), "game: unknown game 'chess'"),
        (('kind = "gauntlet"', 'kind = "elimination"'), "format: Input tag 'elimination'"),
        (('challengers = ["mine"]', 'challengers = ["yours"]'), "format: names bot 'yours'"),
        (("games_per_pairing = 4", "games_per_pairing = 3"), "must be a multiple of seats"),
        (("concurrency = 3", "concurrency = 0"), "run.concurrency: Input should be greater"),
        (("decision_ms = 200", "decision_ms = 200\npace = 2"), "time_control.pace: Extra"),
        (
            ("decision_ms = 200", 'decision_ms = 200\nspeed = "measure"'),
            'time_control: speed scales a CPU budget: it needs clock = "cpu"',
        ),
        (('spec = "mine.py"', 'spec = "gone.py"'), "bots.1.spec: 'gone.py' is not a bot"),
        (('name = "mine"', 'name = "opposing-force"'), "bots: names must differ"),
        (("[run]", "[format.x]\n[run]"), "format.gauntlet.x: Extra inputs"),
        (("seed = 7", "seed = 7\n[options]\nfull_house = true"), "options: "),
    ],
)
def test_a_bad_file_names_what_is_wrong(
    tmp_path: Path, change: tuple[str, str], message: str
) -> None:
    assert change[0] in GOOD
    with pytest.raises(ConfigError) as caught:
        load_config(write(tmp_path, GOOD.replace(change[0], change[1], 1)))
    assert message in str(caught.value)


def test_not_toml_or_missing_is_a_clear_error(tmp_path: Path) -> None:
    with pytest.raises(ConfigError, match="not valid TOML"):
        load_config(write(tmp_path, "name = "))
    with pytest.raises(ConfigError, match="cannot read"):
        load_config(tmp_path / "absent.toml")


def test_options_the_game_refuses_at_this_table_are_refused(tmp_path: Path) -> None:
    """Capture the Commander's teams need four seats: at three, every match would fail."""
    text = (
        GOOD.replace('game = "opposing-force"', 'game = "capture-the-commander"')
        .replace("games_per_pairing = 4", "games_per_pairing = 3\nseats = 3")
        .replace('output = "out/cup"', 'output = "out/cup"\n[options]\nteams = true')
    )
    with pytest.raises(ConfigError, match=r"format\.seats: capture-the-commander: teams needs"):
        load_config(write(tmp_path, text))


def test_a_table_bigger_than_the_game_allows_is_refused(tmp_path: Path) -> None:
    text = GOOD.replace("games_per_pairing = 4", "games_per_pairing = 3\nseats = 3")
    with pytest.raises(ConfigError, match="played by 2 seats, not 3"):
        load_config(write(tmp_path, text))


def test_a_bot_may_be_a_command_run_in_its_own_folder(tmp_path: Path) -> None:
    """cmd@FOLDER:COMMAND is a command, not a Python file on an interpreter of its own (its
    '@'), and its FOLDER must be absolute."""
    spec = f"cmd@{tmp_path}:python3 mine.py"
    config = load_config(write(tmp_path, GOOD.replace('spec = "mine.py"', f'spec = "{spec}"')))
    assert config.bots[1].spec == spec and not config.bots[1].own_python
    with pytest.raises(ConfigError) as caught:
        load_config(write(tmp_path, GOOD.replace('spec = "mine.py"', 'spec = "cmd@bots:x"')))
    assert "bots.1.spec: 'cmd@bots:x': cmd@FOLDER needs an absolute FOLDER" in str(caught.value)
