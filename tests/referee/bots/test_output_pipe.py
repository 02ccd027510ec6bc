"""The pipe of a bot's output (referee/bots/output.py), with real processes: one that writes
50 MB as fast as it can is never blocked (the referee keeps reading and drops past the cap),
and one whose child outlives it, holding the pipe, does not hold up its stop."""

from __future__ import annotations

import asyncio
import os
import re
import signal
import subprocess
import time
from pathlib import Path

import pytest

from referee.bots.launcher import parse_spec, start_bot, stop_bot
from referee.bots.output import OutputBudget, OutputCaps

FLOOD = "head -c 50000000 /dev/zero | tr '\\0' x; echo done >&2"


@pytest.mark.timeout(60)
def test_a_bot_writing_50_mb_is_never_blocked_and_keeps_its_cap(tmp_path: Path) -> None:
    log = tmp_path / "logs" / "flood-1.log"
    budget = OutputBudget(OutputCaps(match_bytes=64 * 1024, bot_bytes=1024 * 1024))

    async def run() -> tuple[int, float]:
        began = time.monotonic()
        bot = await start_bot(
            parse_spec(f'cmd:sh -c "{FLOOD}"'), "127.0.0.1:9", "t", log, None, budget
        )
        code = await asyncio.wait_for(bot.wait(), 30)
        seconds = time.monotonic() - began
        await stop_bot(bot)
        return code, seconds

    code, seconds = asyncio.run(run())
    assert code == 0 and seconds < 20
    text = log.read_text()
    assert 64 * 1024 < len(text) < 64 * 1024 + 512
    assert text.count("[arena] output past 64 KiB here is dropped") == 1
    assert "[arena] 49934469 bytes of output were dropped here" in text  # 50 MB + 5 - 64 KiB
    assert "[arena] the bot's process exited with code 0" in text
    print(f"50 MB through the pipe in {seconds:.2f} s")


@pytest.mark.timeout(30)
def test_the_control_a_pipe_nobody_reads_blocks_the_same_bot(tmp_path: Path) -> None:
    """What the referee's reading prevents: the same writer, its pipe unread, is stuck."""
    stuck = subprocess.Popen(["sh", "-c", FLOOD], stdout=subprocess.PIPE, stderr=subprocess.PIPE)
    try:
        with pytest.raises(subprocess.TimeoutExpired):
            stuck.wait(3)
    finally:
        stuck.kill()
        stuck.communicate()


@pytest.mark.timeout(60)
def test_a_child_holding_the_pipe_after_its_bot_ended_does_not_hold_up_its_stop(
    tmp_path: Path,
) -> None:
    log = tmp_path / "logs" / "parent-1.log"
    child = "setsid sh -c 'echo child $$; exec sleep 30' &"
    spec = parse_spec(f'cmd:sh -c "echo before; {child} sleep 0.5; echo after; exit 3"')

    async def run() -> float:
        bot = await start_bot(spec, "127.0.0.1:9", "t", log)
        await asyncio.wait_for(bot.wait(), 10)  # the exit is seen though the pipe stays open
        began = time.monotonic()
        await stop_bot(bot)
        return time.monotonic() - began

    seconds = asyncio.run(run())
    text = log.read_text()
    os.kill(int(re.findall(r"child (\d+)", text)[0]), signal.SIGKILL)  # it outlived its bot
    assert seconds < 5
    assert "before" in text and "after" in text
    assert "[arena] the bot's process exited with code 3" in text
