"""A bot's pool of processes: a process is started once and plays match after match over its
one session, so short games are not dominated by process start-up; it plays one match at a
time, so the pool grows to as many processes of the bot as there are matches at once that seat
it. No process ever plays two seatings of one deal: a process that has played a deal is not
given that deal again. A process that crashed, hung up or never joined is retired, and the
bot's next match starts a fresh one."""

from __future__ import annotations

import asyncio
from collections.abc import Callable
from dataclasses import dataclass, field
from pathlib import Path
from typing import Protocol

import structlog
from arena_games.match_settings import Misbehaviour

from referee.bots.launcher import (
    BotSpec,
    SpecError,
    cpu_group_of,
    exit_words,
    output_of,
    process_end,
    start_bot,
    stop_bot,
)
from referee.bots.output import BotOutput, OutputBudget
from referee.bots.sandbox import Sandbox
from referee.hosting.joining import wait_joined
from referee.wire.server import RefereeServer
from referee.wire.sessions import BotSession

log = structlog.get_logger("referee.hosting.bot_pool")
ProcessWatch = Callable[[int, bool], None]  # a bot process's pid, and whether it is alive


@dataclass(eq=False)
class LiveBot:
    """One bot process and its session with the referee."""

    session: BotSession
    process: asyncio.subprocess.Process | None
    no_show: str | None = None  # why it is absent, as the seats are told: no paths
    why: str | None = None  # the same for the referee's console: where its log is, how it ends
    deals: set[str] = field(default_factory=set)  # every deal it has been seated for

    @property
    def output(self) -> BotOutput | None:
        return output_of(self.process) if self.process is not None else None

    @property
    def alive(self) -> bool:
        return (
            self.no_show is None
            and self.process is not None
            and self.process.returncode is None
            and self.session.failure is None
        )


class Pool(Protocol):
    """Where a bot's seats come from: processes the host starts (BotPool), or the one session
    of a bot that connects by itself (a live ladder's remote bot)."""

    async def checkout(self, deal: str) -> LiveBot: ...

    async def checkin(self, live: LiveBot, retire: bool) -> None: ...

    async def drain(self) -> None:
        """Stop the idle processes now and each busy one when its match ends."""
        ...

    async def close(self) -> None: ...


@dataclass(eq=False)
class BotPool:
    """A bot's processes: started when a match needs one, reused while they live."""

    bot: BotSpec
    server: RefereeServer
    logs: Path | None
    connect_timeout_s: float
    sandbox: Sandbox | None = None
    address: str = ""  # where the bot reaches the referee: a unix: one from inside a sandbox
    rejoin_grace_s: float = 0.0
    idle: list[LiveBot] = field(default_factory=list)
    everyone: set[LiveBot] = field(default_factory=set)  # idle or at a table
    started: int = 0
    watching: set[asyncio.Task[None]] = field(default_factory=set)  # one per live process
    draining: bool = False  # no more matches: each process stops when its match ends
    # Told each process's pid when it starts (True) and when it has ended (False): a referee
    # process of the cores executor tells its parent, which ends them if it dies first.
    on_process: ProcessWatch | None = None
    budget: OutputBudget = field(default_factory=OutputBudget)  # the bot's output, kept so far
    count_cpu: bool = False  # each process in a CPU group of its own: the CPU clock

    async def checkout(self, deal: str) -> LiveBot:
        """An idle process that has never seen this deal, or a fresh one. The choice is made
        before any await, so two matches of one deal checking out at once never share one."""
        dead = [live for live in self.idle if not live.alive]
        self.idle = [live for live in self.idle if live.alive]
        chosen = next((live for live in reversed(self.idle) if deal not in live.deals), None)
        if chosen is not None:
            self.idle.remove(chosen)
            chosen.deals.add(deal)
        await asyncio.gather(*(self.retire(live) for live in dead))
        if chosen is None:
            chosen = await self._start()
            chosen.deals.add(deal)
        return chosen

    async def checkin(self, live: LiveBot, retire: bool) -> None:
        """The match is over: the process is retired (its last words go to the match's log)
        or waits for the next one (its output going to its own log meanwhile)."""
        if retire or self.draining or not live.alive:
            await self.retire(live)
        else:
            if live.output is not None:
                live.output.between()
            self.idle.append(live)

    async def retire(self, live: LiveBot) -> None:
        self.everyone.discard(live)
        live.session.end("the referee has no more matches for this process")
        self.server.lobby.forget(live.session)
        if live.process is not None:
            await stop_bot(live.process)

    async def drain(self) -> None:
        self.draining = True
        idle, self.idle = self.idle, []
        await asyncio.gather(*(self.retire(live) for live in idle))

    async def close(self) -> None:
        self.idle = []
        await asyncio.gather(*(self.retire(live) for live in list(self.everyone)))

    async def _start(self) -> LiveBot:
        self.started += 1
        session = self.server.lobby.register(self.bot.name, self.bot.spec)
        log_path = self.logs / f"{self.bot.name}-{self.started}.log" if self.logs else None
        try:
            process = await start_bot(
                self.bot,
                self.address,
                session.token,
                log_path,
                self.sandbox,
                self.budget,
                count_cpu=self.count_cpu,
            )
        except SpecError as exc:
            # The cause goes to every seat in the result: the paths in it stay in the log.
            log.error("bot_not_started", bot=self.bot.name, error=str(exc))
            return LiveBot(
                session,
                None,
                no_show="could not be started (see the tournament log)",
                why=f"could not be started: {exc}",
            )
        session.process_end = process_end(process, self.sandbox)
        group = cpu_group_of(process)
        session.cpu_s = group.cpu_s if group is not None else None
        live = LiveBot(session, process)
        self.everyone.add(live)
        if self.on_process is not None:
            self.on_process(process.pid, True)
        # A stream that drops may be taken over by the same process within the grace; a
        # process that ends cannot come back: its session fails at once.
        session.rejoin_grace_s = self.rejoin_grace_s
        watch = asyncio.create_task(self._fail_at_exit(live, process))
        self.watching.add(watch)
        watch.add_done_callback(self.watching.discard)
        absent = await wait_joined(
            session, process, self.connect_timeout_s, self.sandbox, self.server.lobby
        )
        if absent is not None:
            live.no_show, live.why = absent.detail, absent.explained(log_path)
            log.warning("bot_absent", bot=self.bot.name, why=live.why)
        return live

    async def _fail_at_exit(self, live: LiveBot, process: asyncio.subprocess.Process) -> None:
        await process.wait()
        if self.on_process is not None:
            self.on_process(process.pid, False)
        live.session.fail(Misbehaviour.CRASH, f"its process {exit_words(process, self.sandbox)}")
