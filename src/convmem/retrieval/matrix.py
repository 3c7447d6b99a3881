"""Vectors as they travel: float32 matrices of unit rows, and the normalisation that makes them.

Its own module so the embedders (``vector``) and the ONNX runtime they may load
(``onnx_runtime``) both use it without importing each other in a cycle.
"""

from __future__ import annotations

from typing import Any

import numpy as np
import numpy.typing as npt

Matrix = npt.NDArray[np.float32]


def normalise(matrix: npt.NDArray[Any]) -> Matrix:
    rows = np.asarray(matrix, dtype=np.float32)
    if rows.ndim == 1:
        rows = rows[None, :]
    norms = np.linalg.norm(rows, axis=1, keepdims=True)
    norms[norms == 0] = 1.0
    return np.asarray(rows / norms, dtype=np.float32)
