r"""Stochastic gradient descent: the settings of an online run and the descent loop itself.

* :class:`OnlineSettings` — everything that configures :func:`localization.train.train_online` and
  :func:`localization.train.train_sweep`, validated once when built (:func:`check_schedule` is the
  part full-batch descent shares).
* :func:`gradient_descent` — :math:`p \leftarrow p-\eta\nabla_p\,\mathrm{loss}(p, x_t, y_t)` for a
  stack of initialisations on shared batches, on the one checkpointed loop
  :func:`localization.trajectory.checkpointed_scan`; :func:`online_batches` — the batch of step
  ``t`` drawn with ``jax.random.fold_in(key, t)`` (the one stream convention). Online SGD, full-batch
  GD (:mod:`localization.train`) and the reduced two-population model
  (:mod:`localization.experiments.specialisation`) descend with it.
"""

from __future__ import annotations

import dataclasses
from collections.abc import Callable
from functools import partial
from typing import Any

import jax
import jax.numpy as jnp
import numpy as np

from localization import models as _models
from localization import validation as v
from localization.trajectory import checkpoint_steps, checkpointed_scan

__all__ = ["PRNGS", "STREAMS", "OnlineSettings", "check_schedule", "online_batches", "gradient_descent"]

#: Sources of the random bits of the per-step keys (see :mod:`localization.train`).
PRNGS = ("splitmix", "key")
#: Data streams of the initialisations: one stream shared by all (default) or one per initialisation.
STREAMS = ("shared", "per_init")


def _check_bool(name: str, value: Any) -> bool:
    if not isinstance(value, bool):
        raise TypeError(f"{name} must be a bool, got {value!r}")
    return value


def check_schedule(
    model: str, activation: str, dtype: Any, lr: float, steps: int, checkpoints: Any, record_loss: bool
) -> tuple[np.dtype, float, int, np.ndarray]:
    """Validate the arguments every (S)GD run of :mod:`localization.train` takes.

    Parameters
    ----------
    model, activation, dtype, lr, steps, checkpoints, record_loss : as in :class:`OnlineSettings`.

    Returns
    -------
    tuple
        ``(dtype, lr, steps, checkpoint steps)``: NumPy dtype, float, int and the (C,) int64 array
        of :func:`localization.trajectory.checkpoint_steps`.

    Raises
    ------
    TypeError, ValueError
        Naming the argument, its value and the valid range.
    """
    _models.check_architecture(model, activation)
    dtype = v.floating_dtype("dtype", dtype, allowed=("float32", "float64"))
    lr = v.positive("lr", lr)
    steps = v.integer("steps", steps, minimum=0)
    _check_bool("record_loss", record_loss)
    return dtype, lr, steps, checkpoint_steps(checkpoints, steps)


@dataclasses.dataclass(frozen=True)
class OnlineSettings:
    """Configure an online-SGD run of :func:`localization.train.train_online` or ``train_sweep``.

    Validated and normalised once, when built; :func:`dataclasses.replace` builds a changed copy
    (validated again). The fields are the keyword arguments of ``train_online``.

    Parameters
    ----------
    lr : learning rate η > 0.
    batch : examples per step (≥ 1; ≥ 2 with ``balanced``).
    steps : number of SGD steps (≥ 0).
    checkpoints : int C (C evenly spaced step indices in [0, steps]) or a non-decreasing sequence of
        step indices (stored as a tuple); the weights after that many steps are recorded. Default 101.
    n : input size (int or grid tuple, stored as a tuple) passed to ``task.sample``; default (None)
        the last axis of the initial weights.
    model, activation : see :mod:`localization.models` ("neuron" needs "relu").
    dtype : jnp.float32 (default, fast) or jnp.float64 (stored as a NumPy dtype).
    record_loss : also record the batch loss at each checkpoint (costs one extra batch per checkpoint).
    balanced : draw exactly ⌊B/2⌋ examples of class 0 and the rest of class 1 (from
        ``task.model0``/``task.model1``) instead of i.i.d. Bernoulli(½) labels: same expected
        gradient, slightly less noise.
    prng : "splitmix" (default; threefry keys, SplitMix64 bits, see :mod:`localization.train`) or "key"
        (bits from the key's own implementation).
    streams : "shared" (default: every initialisation trains on the one stream of the key) or
        "per_init" (initialisation ``i`` on its own stream, that of ``fold_in(key, i)``, as separate
        runs with their own data seeds; one batch per initialisation and step).

    Raises
    ------
    TypeError, ValueError
        Naming the field, its value and the valid range.
    """

    lr: float
    batch: int
    steps: int
    checkpoints: int | tuple[int, ...] = 101
    n: int | tuple[int, ...] | None = None
    model: str = "neuron"
    activation: str = "relu"
    dtype: Any = jnp.float32
    record_loss: bool = False
    balanced: bool = False
    prng: str = "splitmix"
    streams: str = "shared"

    def __post_init__(self) -> None:
        """Validate every field and store it normalised."""
        put = partial(object.__setattr__, self)
        dtype, lr, steps, ck = check_schedule(
            self.model, self.activation, self.dtype, self.lr, self.steps, self.checkpoints, self.record_loss
        )
        put("dtype", dtype)
        put("lr", lr)
        put("steps", steps)
        cp = self.checkpoints
        put("checkpoints", int(cp) if isinstance(cp, (int, np.integer)) else tuple(int(c) for c in ck))
        _check_bool("balanced", self.balanced)
        put("batch", v.integer("batch", self.batch, minimum=2 if self.balanced else 1))
        if self.n is not None:
            put("n", v.shape("n", self.n, minimum=1))
        if self.prng not in PRNGS:
            raise ValueError(f"prng must be one of {PRNGS}, got {self.prng!r}")
        if self.streams not in STREAMS:
            raise ValueError(f"streams must be one of {STREAMS}, got {self.streams!r}")

    @classmethod
    def of(cls, settings: OnlineSettings | None = None, **fields: Any) -> OnlineSettings:
        """Return ``settings`` with ``fields`` changed, or new settings from ``fields`` alone.

        Parameters
        ----------
        settings : OnlineSettings or None.
        **fields : field values (names as in the class; unknown names raise ``TypeError``).

        Returns
        -------
        OnlineSettings
            Validated settings.
        """
        names = {f.name for f in dataclasses.fields(cls)}
        unknown = sorted(set(fields) - names)
        if unknown:
            raise TypeError(f"unknown training settings {unknown}; the settings are {sorted(names)}")
        if settings is None:
            return cls(**fields)
        if not isinstance(settings, cls):
            raise TypeError(f"settings must be an OnlineSettings or None, got {type(settings).__name__}")
        return dataclasses.replace(settings, **fields) if fields else settings


# -------------------------------------------------------------------------------------------------
# the descent (traced)
# -------------------------------------------------------------------------------------------------
def online_batches(key: jax.Array, sample: Callable[[jax.Array], Any]) -> Callable[[jax.Array], Any]:
    """Return the batch of online step ``t``, ``sample(jax.random.fold_in(key, t))`` (the one stream convention).

    Parameters
    ----------
    key : JAX PRNG key of the stream.
    sample : callable ``key -> (x, y)`` drawing one batch.

    Returns
    -------
    callable
        ``t -> (x, y)``, the ``batch_at`` argument of :func:`gradient_descent`.
    """
    if not callable(sample):
        raise TypeError(f"sample must be callable, got {type(sample).__name__}")
    return lambda t: sample(jax.random.fold_in(key, t))


def gradient_descent(
    params: Any,
    loss: Callable[[Any, jax.Array, jax.Array], jax.Array],
    batch_at: Callable[[jax.Array], Any],
    lr: jax.Array,
    gaps: Any,
    *,
    record_loss: bool = False,
) -> tuple[Any, jax.Array | None]:
    r"""Run (S)GD :math:`p \leftarrow p - \eta\nabla_p\,\mathrm{loss}(p, x_t, y_t)` with checkpoints (inside ``jit``).

    Every initialisation (leading axis of ``params``) descends on the same batches (``vmap``); the
    loop is :func:`localization.trajectory.checkpointed_scan`. Only the callables are checked (the
    values may be traced): callers validate the rest.

    Parameters
    ----------
    params : pytree whose leaves have a leading axis I (initialisations).
    loss : callable ``(one initialisation's params, x, y) -> scalar``.
    batch_at : callable ``t -> (x, y)``, the batch of step ``t`` (:func:`online_batches` for online
        SGD, a constant for full-batch GD).
    lr : scalar learning rate η, in the parameters' dtype.
    gaps : (C,) int steps between checkpoints (:func:`localization.trajectory.checkpoint_gaps`).
    record_loss : also record the loss on the batch step ``t`` would draw at each checkpoint.

    Returns
    -------
    tuple
        ``(params (C, I, ...), loss (C, I) or None)`` at the checkpoints.
    """
    for name, fn in (("loss", loss), ("batch_at", batch_at)):
        if not callable(fn):
            raise TypeError(f"{name} must be callable, got {type(fn).__name__}")
    grads = jax.vmap(jax.grad(loss), in_axes=(0, None, None))
    losses = jax.vmap(loss, in_axes=(0, None, None))

    def step(p, t):
        x, y = batch_at(t)
        return jax.tree_util.tree_map(lambda a, b: a - lr * b, p, grads(p, x, y))

    def record(p, t):
        if not record_loss:
            return p, None
        x, y = batch_at(t)
        return p, losses(p, x, y)

    return checkpointed_scan(step, params, gaps, record)
