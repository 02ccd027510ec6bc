"""What an archive may hold, as the operator sets it, and the one error a submission gets.

The limits are a model the ladder's TOML can take as a table of its own, e.g.

    [submissions]
    archive_mb = 10         # the archive as uploaded
    unpacked_mb = 50        # all its files' bytes once unpacked, counted as they are read
    files = 2000            # files and folders in it
    name_chars = 255        # a path inside the archive, in characters
    depth = 16              # folders on a path inside the archive
"""

from __future__ import annotations

from pydantic import BaseModel, ConfigDict, Field

MB = 1_000_000


class SubmissionRefused(ValueError):
    """An archive or manifest that is not stored; the message is one line naming what was
    wrong, fit to show the author as is (it never holds a server path)."""


class SubmissionLimits(BaseModel):
    model_config = ConfigDict(extra="forbid", frozen=True, allow_inf_nan=False)

    archive_mb: float = Field(default=10, gt=0, le=1000, description="the archive as uploaded")
    unpacked_mb: float = Field(
        default=50, gt=0, le=10_000, description="all its files once unpacked"
    )
    files: int = Field(default=2000, ge=1, le=100_000, description="files and folders in it")
    name_chars: int = Field(
        default=255, ge=16, le=1024, description="a path inside the archive, in characters"
    )
    depth: int = Field(default=16, ge=1, le=64, description="folders on a path inside it")

    @property
    def archive_bytes(self) -> int:
        return int(self.archive_mb * MB)

    @property
    def unpacked_bytes(self) -> int:
        return int(self.unpacked_mb * MB)
