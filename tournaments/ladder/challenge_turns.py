"""When serve may start a challenge match rather than a rated one: challenges take at most
[challenges] share of the running matches, so rated play goes on beside any number of them.

With concurrency c and share s, at most floor(c * s) challenge matches run at once. When that
is 0 (concurrency 1 at the default share 0.5, say), challenges take turns with rated play
instead: one challenge match, then at least ceil(1 / s) - 1 rated ones started before the next
(with 0.5: they alternate). A share of 0 plays no challenge; a share of 1 lets challenges take
every slot while any is queued."""

from __future__ import annotations

import math
from dataclasses import dataclass


@dataclass
class ChallengeTurns:
    share: float
    concurrency: int
    rated_since: int = 1_000_000  # rated matches started since the last challenge match

    def may_start(self, running: int) -> bool:
        """Whether one more challenge match may start while `running` of them run."""
        if self.share <= 0:
            return False
        if running + 1 <= math.floor(self.share * self.concurrency + 1e-9):
            return True
        taking_turns = self.share * self.concurrency < 1 and running == 0
        return taking_turns and self.rated_since >= math.ceil(1 / self.share - 1e-9) - 1

    def started(self, challenge: bool) -> None:
        self.rated_since = 0 if challenge else self.rated_since + 1
