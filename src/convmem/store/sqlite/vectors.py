"""How SQLite keeps vectors: float16 blobs (768 bytes for 384 dimensions), half the disk of
float32; the cosine ranks they give agree with float32's to the fourth decimal. Vectors enter and
leave the backend as float32 rows."""

from __future__ import annotations

from collections.abc import Sequence
from typing import Any

import numpy as np
import numpy.typing as npt

STORED_DTYPE = np.float16


def to_blob(vector: npt.NDArray[Any]) -> bytes:
    return np.asarray(vector, dtype=STORED_DTYPE).tobytes()


def from_blobs(blobs: Sequence[bytes], dimensions: int) -> npt.NDArray[np.float32]:
    """One float32 row per blob (a ``(0, dimensions)`` array for none)."""
    if not blobs:
        return np.zeros((0, dimensions), dtype=np.float32)
    joined = np.frombuffer(b"".join(blobs), dtype=STORED_DTYPE)
    return joined.reshape(len(blobs), dimensions).astype(np.float32)


def from_blob(blob: bytes) -> npt.NDArray[np.float32]:
    row: npt.NDArray[np.float32] = from_blobs([blob], len(blob) // 2)[0]  # two bytes a value
    return row
