"""Trajectories on the book's time axis and the one loop that records them.

The book's time convention: t = (number of SGD steps) × (learning rate). Online SGD, full-batch
gradient descent (:mod:`localization.train`), the integrators of the theory's flows
(:mod:`localization.theory.effective`, :mod:`localization.theory.hypercube_flow`) and the reduced
two-population model (:mod:`localization.experiments.specialisation`) all iterate a step function
with :func:`checkpointed_scan`, record the state at the same checkpoint steps
(:func:`checkpoint_steps`, :func:`checkpoint_gaps`), check for divergence with :func:`diverged`
(a flag per run) or :func:`require_finite` (an error), and return the same :class:`Trajectory`, so
flows and SGD overlay without reindexing.
"""

from __future__ import annotations

from collections.abc import Callable, Sequence
from typing import Any, NamedTuple

import jax
import jax.numpy as jnp
import numpy as np
from jax import lax

from localization import validation as v

__all__ = [
    "Trajectory",
    "checkpoint_steps",
    "checkpoint_gaps",
    "checkpointed_scan",
    "DivergenceError",
    "diverged",
    "require_finite",
]


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
        """Return the trajectory at ``index`` of the leading axes (one task of a sweep, one initialisation).

        Parameters
        ----------
        index : int, slice or index array applied in front of ``weights`` and ``loss``.

        Returns
        -------
        localization.trajectory.Trajectory
            ``weights`` and ``loss`` indexed in front; ``times`` and ``steps`` shared.
        """

        def pick(tree: Any) -> Any:
            return None if tree is None else jax.tree_util.tree_map(lambda leaf: leaf[index], tree)

        return Trajectory(self.times, self.steps, pick(self.weights), pick(self.loss))


def checkpoint_steps(checkpoints: int | Sequence[int] | np.ndarray, steps: int) -> np.ndarray:
    """Normalise ``checkpoints`` to a sorted int64 array of step indices in [0, steps].

    Parameters
    ----------
    checkpoints : int or sequence of int
        An int C (C evenly spaced indices from 0 to ``steps`` inclusive, rounded, duplicates
        dropped; C = 1 means only the final step) or a non-decreasing 1-D sequence of ints in
        [0, steps].
    steps : int
        The number of steps (≥ 0).

    Returns
    -------
    numpy.ndarray
        (C,) int64 step indices, non-decreasing.

    Raises
    ------
    TypeError
        When ``checkpoints`` is neither an int nor a non-empty 1-D sequence of ints.
    ValueError
        When an index lies outside [0, steps] or the sequence decreases.
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


def checkpoint_gaps(steps_at: np.ndarray) -> np.ndarray:
    """Return the number of steps between consecutive checkpoints (the first counted from step 0).

    Parameters
    ----------
    steps_at : (C,) non-decreasing int array of checkpoint steps (from :func:`checkpoint_steps`).

    Returns
    -------
    numpy.ndarray
        (C,) int32 gaps, ``gaps[c] = steps_at[c] - steps_at[c - 1]`` with ``steps_at[-1] = 0``; the
        ``gaps`` argument of :func:`checkpointed_scan`.
    """
    return np.diff(np.concatenate([[0], np.asarray(steps_at, np.int64)])).astype(np.int32)


def _check_callables(**fns: Any) -> None:
    """Raise TypeError naming the first argument that is neither callable nor (for ``record``) None."""
    for name, fn in fns.items():
        if not (callable(fn) or (fn is None and name == "record")):
            raise TypeError(f"{name} must be callable, got {type(fn).__name__}")


def checkpointed_scan(
    step: Callable[[Any, jax.Array], Any],
    state: Any,
    gaps: Any,
    record: Callable[[Any, jax.Array], Any] | None = None,
) -> Any:
    """Iterate ``state = step(state, t)`` and record the state at checkpoints (inside ``jit``).

    The one integration loop of the library: ``lax.scan`` over the checkpoints, ``lax.fori_loop``
    over the steps between two of them, the step index ``t`` (int32, counted from 0) carried along,
    so step ``t`` of a long run is step ``t`` of a short one (online SGD draws its batch of step
    ``t`` with ``jax.random.fold_in(key, t)``).

    Parameters
    ----------
    step : callable ``(state, t) -> state`` with the same pytree structure, shapes and dtypes.
    state : pytree, the initial state (step 0).
    gaps : (C,) int array (traced is fine) of steps between consecutive checkpoints, from
        :func:`checkpoint_gaps`; a gap of 0 records the same state again.
    record : callable ``(state, t) -> pytree`` evaluated at each checkpoint, ``t`` the number of
        steps done; default the state itself.

    Returns
    -------
    pytree
        The records stacked along a new leading axis of length C.

    Raises
    ------
    TypeError
        When ``step`` or ``record`` is not callable or ``gaps`` is not a 1-D integer array.
    """
    _check_callables(step=step, record=record)
    if jnp.ndim(gaps) != 1 or not jnp.issubdtype(jnp.result_type(gaps), jnp.integer):
        raise TypeError(f"gaps must be a 1-D integer array (checkpoint_gaps), got {gaps!r}")

    def advance(_, carry):
        s, t = carry
        return step(s, t), t + 1

    def segment(carry, gap):
        carry = lax.fori_loop(0, gap, advance, carry)
        s, t = carry
        return carry, (s if record is None else record(s, t))

    _, recorded = lax.scan(segment, (state, jnp.zeros((), jnp.int32)), gaps)
    return recorded


class DivergenceError(FloatingPointError, ValueError):
    """A run left the finite numbers (NaN or inf in its state): the step is too large for the problem.

    A ``FloatingPointError`` (an arithmetic failure) and a ``ValueError`` (the step size given is
    outside the range in which the iteration is stable).
    """


def diverged(tree: Any, axes: int = 0) -> np.ndarray:
    """Flag the runs that left the finite numbers (the one divergence check of the library's loops).

    Parameters
    ----------
    tree : pytree of arrays (recorded states); every leaf has the same leading ``axes`` axes.
    axes : number of leading axes that index runs (e.g. 1 for (inits, C, ...) weights); 0 for one run.

    Returns
    -------
    numpy.ndarray
        bool of the shape of the leading ``axes`` axes (a 0-d array for ``axes=0``): True where some
        entry of that run is NaN or infinite.
    """
    axes = v.integer("axes", axes, minimum=0)
    leaves = jax.tree_util.tree_leaves(tree)
    if not leaves:
        raise ValueError("tree must have at least one array leaf")
    lead = np.shape(leaves[0])[:axes]
    bad = np.zeros(lead, bool)
    for leaf in leaves:
        leaf = np.asarray(leaf)
        if leaf.shape[:axes] != lead:
            raise ValueError(f"every leaf must start with the run axes {lead}, got shape {leaf.shape}")
        bad |= ~np.isfinite(leaf).reshape(*lead, -1).all(axis=-1)
    return bad


def require_finite(tree: Any, message: str) -> None:
    """Raise :class:`DivergenceError` with ``message`` if some entry of ``tree`` is NaN or infinite.

    :func:`diverged` as an error, applied on the host to what :func:`checkpointed_scan` recorded
    (NaN and inf persist once reached, so the recorded states suffice).

    Parameters
    ----------
    tree : pytree of arrays (recorded states).
    message : str, the error's text (say what diverged and what to change).

    Raises
    ------
    DivergenceError
        When some entry is NaN or infinite.
    """
    if diverged(tree):
        raise DivergenceError(message)
