"""Trajectories on the book's time axis, shared by training and by the theory's flows.

The book's time convention: t = (number of SGD steps) × (learning rate). Online SGD, full-batch
gradient descent (:mod:`localization.train`) and the integrators of the theory's flows
(:mod:`localization.theory.effective`) record weights at the same checkpoint steps
(:func:`checkpoint_steps`) and return the same :class:`Trajectory`, so flows and SGD overlay without
reindexing.
"""

from __future__ import annotations

from collections.abc import Sequence
from typing import Any, NamedTuple

import jax
import numpy as np

from localization import validation as v

__all__ = ["Trajectory", "checkpoint_steps"]


class Trajectory(NamedTuple):
    """Weights recorded along a training (or effective-flow) trajectory.

    Attributes
    ----------
    times : (C,) float64, ``steps × lr`` (the book's time convention).
    steps : (C,) int, the checkpoint step indices (weights recorded *after* that many updates).
    weights : (..., C, N) for the single neuron; for ``model="committee"``/``"two_layer"`` a
        :class:`localization.models.Params` whose leaves carry the same (..., C) axes in front of
        their own shape. Leading axes: (parameter values,) + initialisations, as passed in.
    loss : (..., C) mini-batch estimate of the MSE at each checkpoint (on the batch that step ``t``
        of online SGD draws, or on the full data set), or ``None`` if not recorded.
    """

    times: Any
    steps: Any
    weights: Any
    loss: Any = None

    def select(self, index: Any) -> Trajectory:
        """The trajectory at ``index`` of the leading axes (e.g. one task of a sweep, one
        initialisation): ``weights`` and ``loss`` indexed in front, ``times`` and ``steps`` shared."""

        def pick(tree: Any) -> Any:
            return None if tree is None else jax.tree_util.tree_map(lambda leaf: leaf[index], tree)

        return Trajectory(self.times, self.steps, pick(self.weights), pick(self.loss))


def checkpoint_steps(checkpoints: int | Sequence[int] | np.ndarray, steps: int) -> np.ndarray:
    """Normalise ``checkpoints`` to a sorted int64 array of step indices in [0, steps].

    ``checkpoints`` is an int C (C evenly spaced indices from 0 to ``steps`` inclusive, rounded,
    duplicates dropped; C = 1 means only the final step) or a non-decreasing 1-D sequence of ints in
    [0, steps] (same convention as ``theory.integrate_effective``).
    """
    steps = v.integer("steps", steps, minimum=0)
    if isinstance(checkpoints, (int, np.integer)) and not isinstance(checkpoints, bool):
        num = v.integer("checkpoints", checkpoints, minimum=1)
        if num == 1:
            return np.array([steps], dtype=np.int64)
        return np.unique(np.round(np.linspace(0, steps, num)).astype(np.int64))
    if isinstance(checkpoints, bool) or checkpoints is None or isinstance(checkpoints, (str, bytes, float)):
        raise TypeError(f"checkpoints must be an int or a 1-D sequence of ints, got {checkpoints!r}")
    arr = np.asarray(checkpoints)
    if arr.ndim != 1 or arr.size == 0 or not np.issubdtype(arr.dtype, np.integer):
        raise TypeError(f"checkpoints must be an int or a non-empty 1-D sequence of ints, got {checkpoints!r}")
    if np.any(arr < 0) or np.any(arr > steps):
        raise ValueError(f"checkpoints must lie in [0, steps={steps}], got {arr.tolist()}")
    if np.any(np.diff(arr) < 0):
        raise ValueError(f"checkpoints must be non-decreasing, got {arr.tolist()}")
    return arr.astype(np.int64)
