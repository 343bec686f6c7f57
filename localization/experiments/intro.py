r"""The introduction's runs (``book/intro.md``): M2 trained by online SGD on NLGP(g).

* :func:`phenomenon` — the runs of the chapter's figure (``figures.intro.intro_phenomenon``): one
  neuron trained on NLGP at several gains from the same initial weights on the same data stream, at
  the paper's Fig. 3 settings (the module constants);
* :func:`gain_sweep` — the same neuron at many gains in one vmapped run, shorter (the chapter's
  explorer, ``figures.intro.explore_gain``), configured by :class:`GainSweepSettings`.

The model is the paper's (M2), :math:`\hat y = \mathrm{ReLU}(\langle w, x\rangle)` on the MSE, paper
Eq. (9); the data NLGP(g) at length-scales ξ = :data:`XI` (``data.family_task("NLGP", g, xi=XI)``).
"""

from __future__ import annotations

import dataclasses
from collections.abc import Mapping, Sequence
from typing import NamedTuple

import jax
import jax.numpy as jnp

from localization import data, initialisation, metrics, train
from localization import validation as v
from localization.trajectory import Trajectory

__all__ = [
    "N",
    "XI",
    "LR",
    "BATCH",
    "STEPS",
    "CHECKPOINTS",
    "INIT_SCALE",
    "Phenomenon",
    "phenomenon",
    "GainSweepSettings",
    "gain_sweep",
]

#: Input size and length-scales (ξ₀, ξ₁) of the paper's Fig. 3; y = 1 for the longer one.
N, XI = 40, (1.0, 3.0)
#: Learning rate, batch size and number of SGD steps (the paper's Fig. 3 settings).
LR, BATCH, STEPS = 0.05, 10_000, 2000
#: Checkpoints of :func:`phenomenon`'s runs (evenly spaced over the steps, both ends included).
CHECKPOINTS = 21
#: Variance multiplier of the initial weights (``initialisation.init_weights``).
INIT_SCALE = 1e-3


class Phenomenon(NamedTuple):
    """The runs of :func:`phenomenon`.

    Attributes
    ----------
    key : jax.Array
        The data stream's key, shared by every run.
    w0 : jax.Array, shape (N,)
        The initial weights (scale :data:`INIT_SCALE`), shared by every run.
    runs : dict of str to localization.trajectory.Trajectory
        Run name → the run, :data:`CHECKPOINTS` checkpoints.
    final_ipr : dict of str to float
        Run name → the IPR (paper App. A.3) of the final weights.
    """

    key: jax.Array
    w0: jax.Array
    runs: dict[str, Trajectory]
    final_ipr: dict[str, float]


def _check_gains(gains: Sequence[float]) -> list[float]:
    gains = list(gains)
    if not gains:
        raise ValueError("gains must hold at least one NLGP gain, got none")
    return [v.positive(f"gains[{i}]", g) for i, g in enumerate(gains)]


def _check_w0(w0: jax.Array) -> None:
    if getattr(w0, "shape", None) != (N,):
        raise ValueError(f"w0 must have shape ({N},), got {getattr(w0, 'shape', None)}")


def phenomenon(key: jax.Array, init_key: jax.Array, gains: Mapping[str, float]) -> Phenomenon:
    """Train M2 by online SGD on NLGP(g) for every gain, from the same weights on the same data.

    The paper's Fig. 3 settings: N = :data:`N`, ξ = :data:`XI`, learning rate :data:`LR`, batch
    :data:`BATCH`, :data:`STEPS` steps, :data:`CHECKPOINTS` checkpoints; initial weights
    ``init_weights(init_key, (N,), init_scale=INIT_SCALE)``.

    Parameters
    ----------
    key : jax.Array
        The data stream's PRNG key (every run sees the same stream).
    init_key : jax.Array
        The PRNG key of the initial weights.
    gains : mapping of str to float
        Run name → NLGP gain g > 0 (at least one).

    Returns
    -------
    Phenomenon
        The keys' results: the data key, the initial weights, the runs and their final IPRs.
    """
    if not isinstance(gains, Mapping):
        raise TypeError(f"gains must be a mapping of run name to gain, got {type(gains).__name__}")
    _check_gains(gains.values())
    checkpoints = jnp.linspace(0, STEPS, CHECKPOINTS).astype(int)
    w0 = initialisation.init_weights(init_key, (N,), init_scale=INIT_SCALE)
    runs = {
        label: train.train_online(
            key, data.family_task("NLGP", g, xi=XI), w0, lr=LR, batch=BATCH, steps=STEPS, checkpoints=checkpoints, n=N
        )
        for label, g in gains.items()
    }
    final_ipr = {label: float(metrics.ipr(run.weights[-1])) for label, run in runs.items()}
    return Phenomenon(key, w0, runs, final_ipr)


@dataclasses.dataclass(frozen=True)
class GainSweepSettings:
    """The settings of :func:`gain_sweep` (shorter runs than :func:`phenomenon`'s), validated when built.

    Attributes
    ----------
    batch, steps, checkpoints : int
        Examples per step, SGD steps and recorded checkpoints, each a positive int.

    Raises
    ------
    TypeError, ValueError
        Naming the field and its value.
    """

    batch: int = 2000
    steps: int = 1000
    checkpoints: int = 11

    def __post_init__(self) -> None:
        """Validate every field (a positive int)."""
        for field in dataclasses.fields(self):
            v.integer(field.name, getattr(self, field.name), minimum=1)


def gain_sweep(
    key: jax.Array, w0: jax.Array, gains: Sequence[float], settings: GainSweepSettings = GainSweepSettings()
) -> Trajectory:
    """Train M2 on NLGP(g) at every gain of ``gains`` at once (one vmapped ``train.train_sweep``).

    The same data stream and start for every gain, at ξ = :data:`XI`, learning rate :data:`LR`,
    N = :data:`N`.

    Parameters
    ----------
    key : jax.Array
        The data stream's PRNG key.
    w0 : jax.Array, shape (N,)
        The initial weights.
    gains : sequence of float
        NLGP gains g > 0 (at least one).
    settings : GainSweepSettings
        Batch, steps and checkpoints.

    Returns
    -------
    Trajectory
        ``weights`` (len(gains), checkpoints, N) and ``times`` (checkpoints,).
    """
    _check_w0(w0)
    if not isinstance(settings, GainSweepSettings):
        raise TypeError(f"settings must be a GainSweepSettings, got {type(settings).__name__}")
    tasks = [data.family_task("NLGP", g, xi=XI) for g in _check_gains(gains)]
    return train.train_sweep(
        key, tasks, w0, lr=LR, batch=settings.batch, steps=settings.steps, checkpoints=settings.checkpoints, n=N
    )
