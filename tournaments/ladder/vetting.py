"""Serve's pipeline for uploaded versions: each is built, then validated, before it may play.

A thread of its own, with its own event loop and database connection, so matches go on while a
version builds or plays its validation games. In the order they came, each version `building`
or `validating` (ladder/uploads.py) is:

1. built once, when its manifest has a `build`: referee.bots.builds in bubblewrap, whatever the
   ladder's tier, with [submissions.build]'s limits, into builds/<NAME@N>/bot (its log
   builds/<NAME@N>/build.log); a build that fails makes the version `failed` with the build's
   reason and its output's last lines;
2. validated: `arena bot check`'s check (referee.hosting.conformance) against the random bot,
   [submissions] validation_games games in every seat of the smallest table, in bubblewrap,
   under the ladder's time control and policies. Those games are the version's validation
   matches: unrated, never in the ladder's matches. Only what would cost it a rated match
   (conformance.faults: a forfeit and its cause, with a timeout only once its bank is spent;
   a decision the referee played for it) makes it `failed`, with the faults and its log's
   last lines. A decision that drew on the time bank, or a message the referee ignored, is
   legal: the version goes live with it said in its status text, as a warning;
3. made live, from its built folder (or its stored one, with no build): its bot's current
   version from then on, matched like any other.

Nothing of it is kept in memory alone: a serve killed during a build or a validation finds the
version `building` or `validating` at its next start and does that version again from its
stored files (a build starts from a fresh copy; what the killed one left is cleared first).
"""

from __future__ import annotations

import asyncio
import contextlib
import threading
from collections import Counter
from dataclasses import replace
from pathlib import Path

import structlog
from arena_games import get_game

from referee.bots.builds import build
from referee.bots.launcher import parse_spec
from referee.bots.sandbox import Sandbox, Tier
from referee.hosting.conformance import CheckRun, check_bot, faults, warnings
from tournaments.ladder import uploads
from tournaments.ladder.config_file import LadderConfig
from tournaments.ladder.database import LadderStore
from tournaments.submissions.archive_rules import SubmissionRefused
from tournaments.submissions.intake import StoredVersion, stored_version

log = structlog.get_logger("tournaments.ladder.vetting")
POLL_S = 0.5
CONFINED = (Tier.BUBBLEWRAP, Tier.DOCKER)
BUILD_OUTPUT = "; its output ends:"  # referee.bots.builds: where a failed build quotes its output
BELOW_BUBBLEWRAP = (
    "the ladder's bots run at sandbox tier {tier!r}: an uploaded bot runs at bubblewrap or "
    "docker only ([sandbox] tier in ladder.toml)"
)


def takes_uploads(sandbox: Sandbox) -> bool:
    """Uploaded code never runs below bubblewrap: a ladder at tier none or rlimits takes none."""
    return sandbox.tier in CONFINED


def bots_sandbox(sandbox: Sandbox, folder: Path) -> Sandbox:
    """The ladder's bots' sandbox: its folder kept from them (the replays and the database
    hold other seatings' cards of a duplicate deal, ladder.toml its tokens), but for each
    uploaded version its own folder (its stored or its built one), which it runs from."""
    versions, builds = folder / uploads.VERSIONS_FOLDER, folder / uploads.BUILDS_FOLDER
    return sandbox.hiding(folder / "replays", folder).running_from(versions, builds)


def check_sandbox(config: LadderConfig, folder: Path) -> Sandbox:
    """Where a version is validated: the ladder's sandbox at bubblewrap at least."""
    box = bots_sandbox(config.sandbox, folder)
    if box.tier not in CONFINED:
        box = box.model_copy(update={"tier": Tier.BUBBLEWRAP})
    return box


def told_faults(run: CheckRun) -> str:
    """The faults that failed a validation as a webhook tells them: each forfeit's cause and
    count, the decisions the referee played, never a detail (it may name a card or quote the
    bot)."""
    causes = Counter(cause.value for cause, _ in run.forfeits)
    said = [f"forfeited {n} of {run.games} games ({cause})" for cause, n in causes.items()]
    played = sum(run.substituted.values())
    if played:
        said.append(f"the referee played {played} decisions for it")
    return "; ".join(said) or "it failed"


def live_reason(run: CheckRun) -> str:
    """A live version's status text: its validation games, and any warning for its author."""
    said = f"live: played {run.games} validation games"
    cautions = warnings(run)
    if not cautions:
        return f"{said} clean"
    return f"{said}; warning (legal in a rated match, but watch it): {' '.join(cautions)}"


class Vetting:
    """The pipeline's thread: start() it with serve, stop() it when serve stops."""

    def __init__(self, config: LadderConfig, folder: Path) -> None:
        self.config = config
        self.folder = folder
        self.versions = folder / uploads.VERSIONS_FOLDER
        self.builds = folder / uploads.BUILDS_FOLDER
        self.stopping = threading.Event()
        self.thread = threading.Thread(target=self._run, name="vetting", daemon=True)
        self.loop: asyncio.AbstractEventLoop | None = None
        self.task: asyncio.Task[None] | None = None

    def start(self) -> None:
        self.thread.start()

    def stop(self, timeout_s: float = 30.0) -> None:
        """Cancel what is under way (a build leaves nothing running or mounted) and wait."""
        self.stopping.set()
        loop, task = self.loop, self.task
        if loop is not None and task is not None:
            with contextlib.suppress(RuntimeError):  # the loop has ended already
                loop.call_soon_threadsafe(task.cancel)
        self.thread.join(timeout_s)

    def _run(self) -> None:
        with contextlib.suppress(asyncio.CancelledError):
            asyncio.run(self._main())

    async def _main(self) -> None:
        self.loop = asyncio.get_running_loop()
        self.task = asyncio.current_task()
        store = LadderStore.open(self.folder)
        try:
            while not self.stopping.is_set():
                for version in uploads.pending(store):
                    if self.stopping.is_set():
                        return
                    await self._vet(store, version)
                await asyncio.sleep(POLL_S)
        finally:
            store.close()

    async def _vet(self, store: LadderStore, version: uploads.Pending) -> None:
        key = version.key
        try:
            stored = stored_version(self.versions, version.content_hash)
        except SubmissionRefused as exc:  # its folder gone from the ladder's
            told = "its stored files cannot be read"
            self._fail(store, key, f"{told}: {exc}", told=told)
            return
        if not takes_uploads(self.config.sandbox):
            said = BELOW_BUBBLEWRAP.format(tier=self.config.sandbox.tier.value)
            self._fail(store, key, said, told=said)
            return
        try:
            await self._build_and_check(store, key, version.bot, stored)
        except asyncio.CancelledError:
            raise  # serve stopping: the version stays as it is, and is done again next start
        except Exception as exc:  # the ladder's fault, not the author's: said, and logged
            log.error("vetting_failed", version=key, error=repr(exc))
            said = f"the ladder could not vet it ({type(exc).__name__})"
            self._fail(store, key, said, told=said)

    async def _build_and_check(
        self, store: LadderStore, key: str, bot: str, stored: StoredVersion
    ) -> None:
        work = self.builds / key
        folder = stored.folder
        uploads.set_status(store, key, "building")
        log.info("version_building", version=key, build=stored.manifest.build is not None)
        if stored.manifest.build is not None:
            limits = self.config.submissions.build
            argv = list(stored.manifest.build)
            built = await build(stored.folder, argv, limits, work, self.config.sandbox)
            build_log = str(built.log.relative_to(self.folder))
            if not built.ok or built.folder is None:
                told = f"build: {built.reason.split(BUILD_OUTPUT)[0]}"
                self._fail(store, key, f"build: {built.reason}", build_log, told)
                return
            folder = built.folder
            uploads.set_status(store, key, "validating", built.reason, build_log)
        else:
            work.mkdir(mode=0o700, parents=True, exist_ok=True)
            uploads.set_status(store, key, "validating", "no build step")
        log.info("version_validating", version=key)
        spec = stored.manifest.spec_in(folder)
        run = await self._validate(spec, bot, work)
        failing = faults(run)
        if failing:
            said = " ".join(failing)
            if run.log_tail:
                said += " Its log ends:\n" + "\n".join(f"  | {line}" for line in run.log_tail)
            told = f"validation against the random bot: {told_faults(run)}"
            self._fail(store, key, f"validation against the random bot: {said}", told=told)
            return
        uploads.go_live(store, key, spec, live_reason(run))
        log.info("version_live", version=key)

    async def _validate(self, spec: str, bot: str, work: Path) -> CheckRun:
        """The version's validation games against the random bot, as the check played them."""
        check_work = work / "check"
        check_work.mkdir(mode=0o700, parents=True, exist_ok=True)
        return await check_bot(
            replace(parse_spec(spec), name=bot),
            get_game(self.config.game),
            self.config.submissions.validation_games,
            check_work,
            settings=self.config.settings(),
            sandbox=check_sandbox(self.config, self.folder),
            join_timeout_s=self.config.run.connect_timeout_s,
        )

    def _fail(
        self,
        store: LadderStore,
        key: str,
        reason: str,
        build_log: str | None = None,
        told: str = "",
    ) -> None:
        """The version failed for `reason`; its webhook event says `told`: the reason with
        no output of the bot or its build, no detail of a forfeit, no path."""
        uploads.set_status(store, key, "failed", reason, build_log, told)
        log.warning("version_failed", version=key, reason=reason)
