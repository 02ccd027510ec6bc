"""Where a match's chance comes from: a secret no bot can know or guess.

A series (an `arena play` or `arena serve` run) or a tournament draws a 256-bit secret from
`secrets`. Each deal's key is derived from it (HMAC-SHA256 over the deal's name), so every
seating of a duplicate deal gets the same cards and a resume or a Dask re-run plays the same
match, while the key of one deal says nothing about another. Chance outcomes come from a
keyed generator (BLAKE2b over a counter): unlike Mersenne Twister, whose state can be rebuilt
from enough of its outputs, the cards a seat sees tell it nothing about the cards it does not.

MatchStart carries a commitment to the deal key (SHA-256 of salt and key); the replay holds the
key and the salt, and `arena replay verify` checks one against the other, so a bot author can
check after the tournament that the cards were fixed before the first move.

A user-given seed (`--seed`, `seed =`) is a practice mode: its secret is a hash of the seed, so
anyone who knows or guesses the seed can compute every deal.
"""

from __future__ import annotations

import hashlib
import hmac
import random
import secrets
import struct
from dataclasses import dataclass

SECRET_BYTES = 32
_SALT_BYTES = 16
_WORDS = struct.Struct("<8Q")
_PRACTICE = b"arena practice seed (guessable):"


def new_secret() -> bytes:
    """A fresh series or tournament secret."""
    return secrets.token_bytes(SECRET_BYTES)


def practice_secret(seed: int) -> bytes:
    """The secret of a practice seed: the same seed gives the same deals, to anyone."""
    return hashlib.sha256(_PRACTICE + str(seed).encode()).digest()


def series_secret(seed: int | None) -> bytes:
    """A fresh secret, or the practice secret of a seed the user gave."""
    return new_secret() if seed is None else practice_secret(seed)


def commitment_of(key: bytes, salt: bytes) -> str:
    """What MatchStart carries: the lowercase hex of SHA-256(salt || key)."""
    return hashlib.sha256(salt + key).hexdigest()


@dataclass(frozen=True)
class DealKey:
    """The key of one deal, with the salt of its commitment."""

    key: bytes
    salt: bytes

    @classmethod
    def of(cls, secret: bytes, deal: str) -> DealKey:
        """The key of the deal named deal in the series or tournament with this secret."""
        name = deal.encode()
        key = hmac.new(secret, b"deal key:" + name, hashlib.sha256).digest()
        salt = hmac.new(secret, b"deal salt:" + name, hashlib.sha256).digest()[:_SALT_BYTES]
        return cls(key, salt)

    @classmethod
    def practice(cls, seed: int) -> DealKey:
        """The one deal of a practice seed (tests, in-process play)."""
        return cls.of(practice_secret(seed), "0")

    @classmethod
    def from_hex(cls, key: str, salt: str) -> DealKey:
        return cls(bytes.fromhex(key), bytes.fromhex(salt))

    @property
    def commitment(self) -> str:
        return commitment_of(self.key, self.salt)

    def chance(self) -> KeyedRandom:
        """The generator of the deal's chance outcomes."""
        return KeyedRandom(self.key)

    def substitutes(self) -> KeyedRandom:
        """The generator of actions the referee picks for a misbehaving seat: apart from the
        chance generator, so a bot's misbehaviour never changes anyone's cards."""
        return KeyedRandom(hmac.new(self.key, b"substitutes", hashlib.sha256).digest())


class KeyedRandom(random.Random):
    """random.Random whose every bit comes from BLAKE2b keyed with a secret, over a counter.

    Only random() and getrandbits() draw (every other method of random.Random is built on
    them), so the sequence is the same on every Python version and platform."""

    def __init__(self, key: bytes) -> None:
        self._key = key
        self._counter = 0
        self._words: list[int] = []
        super().__init__()

    def seed(self, a: object = None, version: int = 2) -> None:
        """Ignored: the key is the whole state (random.Random.__init__ calls this)."""

    def _word(self) -> int:
        if not self._words:
            block = hashlib.blake2b(
                self._counter.to_bytes(8, "little"), key=self._key, digest_size=64
            ).digest()
            self._counter += 1
            self._words = list(_WORDS.unpack(block))
            self._words.reverse()  # pop() from the end takes them in order
        return self._words.pop()

    def random(self) -> float:
        return (self._word() >> 11) * (1.0 / (1 << 53))

    def getrandbits(self, k: int) -> int:
        if k < 0:
            raise ValueError("number of bits must be non-negative")
        value = 0
        for _ in range((k + 63) // 64):
            value = (value << 64) | self._word()
        return value >> (-k % 64)
