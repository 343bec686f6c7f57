r"""Measured checks of the data models' properties S1–S3 (paper §2.2; chapter *Idealized naturalistic data*).

:func:`property_statistics` tests, on samples of one data model, sign symmetry (S3), translation
invariance (S2) and weak dependence at the largest circular distance (S1), with bounded test
functions (``tanh``) so that heavy-tailed models are tested as reliably as the others. Every
statistic is a ratio to its standard error (``metrics.mean_and_se``), so ``|z| < 5`` reads
"consistent with zero".

The paper's own samplers (:mod:`localization.data.paper_samplers`): :func:`paper_sampler_task` builds
the Kur length-scale task with the book's sampler or with the code's, :func:`paper_samplers_fig5`
and :func:`paper_samplers_fig7` train Fig. 5's single neuron and Fig. 7's two-layer networks on both,
on common random numbers, and :func:`record_paper_samplers` writes ``book/data/paper_samplers.json``
(command: ``python -m localization.experiments.data_properties``).
"""

from __future__ import annotations

import dataclasses
from pathlib import Path
from typing import TYPE_CHECKING, Any

import jax
import numpy as np

from localization import data, metrics, train
from localization import validation as v

if TYPE_CHECKING:
    from localization.data.base import DataModel

__all__ = [
    "property_statistics",
    "SAMPLERS",
    "paper_sampler_task",
    "paper_samplers_fig5",
    "paper_samplers_fig7",
    "record_paper_samplers",
    "read_paper_samplers",
    "PAPER_SAMPLERS_RECORD",
]

#: The Kur samplers compared: the book's exact one, and the paper code's in float64 (its notebooks) and
#: float32 (its default dtype).
SAMPLERS = ("book", "paper_float64", "paper_float32")
#: Where :func:`record_paper_samplers` writes its record.
PAPER_SAMPLERS_RECORD = Path(__file__).resolve().parents[2] / "book" / "data" / "paper_samplers.json"


def property_statistics(key: jax.Array, model: DataModel, *, n: int = 40, num: int = 10_000) -> dict[str, Any]:
    r"""Return the S1–S3 statistics of ``model`` from ``num`` samples of size ``n`` drawn with ``key``.

    Parameters
    ----------
    key : jax.Array
        A JAX PRNG key.
    model : DataModel
        The data model.
    n : int
        Ring size, >= 2.
    num : int
        Number of samples, >= 2.

    Returns
    -------
    dict
        The statistics:

        * ``s3`` — the largest :math:`|z|` of the means of :math:`\tanh X_i` and
          :math:`\tanh X_i\tanh X_{i+1}\tanh X_{i+2}` (odd statistics, zero under S3);
        * ``s2`` — the largest :math:`|z|` of the deviation of the position-wise means of
          :math:`\tanh^2 X_i` and :math:`\tanh X_i\tanh X_{i+1}` from their averages over positions
          (0/0 where a statistic is constant counts as 0);
        * ``alpha`` — two (mean, standard error) pairs: the event-pair lower bounds on the α-mixing
          coefficient at circular distance :math:`n/2`, for the events :math:`X_i>0` and
          :math:`|X_i|>\operatorname{median}|X|` (S1);
        * ``corr`` — the exact correlation :math:`\Sigma_{0,n/2}` (``model.covariance(n)``).
    """
    n = v.integer("n", n, 2)
    num = v.integer("num", num, 2)
    x = np.asarray(model.sample(key, num, n))
    t = np.tanh(x)
    half = n // 2
    s3a = metrics.mean_and_se(t.mean(axis=1))
    s3b = metrics.mean_and_se((t * np.roll(t, -1, axis=1) * np.roll(t, -2, axis=1)).mean(axis=1))
    s2 = 0.0
    for stat in (t**2, t * np.roll(t, -1, axis=1)):  # per position: should not depend on i
        pos_mean, pos_se = metrics.mean_and_se(stat)
        dev = np.abs(pos_mean - pos_mean.mean())
        s2 = max(s2, np.max(np.divide(dev, pos_se, out=np.zeros_like(dev), where=pos_se > 0)))  # 0/0 -> 0
    med = np.median(np.abs(x))
    alpha = []
    for event in (x > 0, np.abs(x) > med):
        e = event.astype(float)
        p = e.mean()
        alpha.append(metrics.mean_and_se((e * np.roll(e, -half, axis=1)).mean(axis=1) - p * p))
    return dict(
        s3=max(abs(m) / s for m, s in (s3a, s3b)),
        s2=s2,
        alpha=[(float(m), float(s)) for m, s in alpha],
        corr=float(np.asarray(model.covariance(n))[0, half]),
    )


def paper_sampler_task(k: float, xi: tuple[float, float], sampler: str) -> data.LengthscaleTask:
    """Return the Kur(k) length-scale task at ``xi`` drawn by ``sampler`` (one of :data:`SAMPLERS`).

    ``"paper_float32"`` keeps the code's ``±inf`` samples (``nonfinite="keep"``); a run that meets one
    ends with non-finite weights, which :func:`localization.trajectory.diverged` flags.

    Parameters
    ----------
    k : float
        Kur exponent, > 2.
    xi : tuple[float, float]
        Length-scales (ξ₀, ξ₁), ξ₁ > ξ₀.
    sampler : str
        ``"book"``, ``"paper_float64"`` or ``"paper_float32"``.

    Returns
    -------
    data.LengthscaleTask
        The task.
    """
    if sampler not in SAMPLERS:
        raise ValueError(f"sampler must be one of {SAMPLERS}, got {sampler!r}")
    xi0, xi1 = (v.positive("xi[0]", xi[0]), v.positive("xi[1]", xi[1]))
    if sampler == "book":
        return data.LengthscaleTask(data.Kur(xi0, k), data.Kur(xi1, k))
    prec = sampler.removeprefix("paper_")
    m0 = data.PaperKur(xi0, k, precision=prec, nonfinite="keep")
    return data.LengthscaleTask(m0, dataclasses.replace(m0, xi=xi1))


def paper_samplers_fig5(
    key: jax.Array, ks: tuple[float, ...] = (4.1, 4.5, 5.0, 6.1, 10.0), **settings: Any
) -> dict[str, Any]:
    """Train Fig. 5's single neuron on Kur(k) with each sampler of :data:`SAMPLERS`, on common random numbers.

    One :func:`localization.experiments.simulation.ipr_sweep` per sampler with the same ``key`` (so the
    same initial weights and latent normals): the samplers differ only in the marginal map.

    Parameters
    ----------
    key : jax.Array
        A JAX PRNG key.
    ks : tuple[float, ...]
        Kur exponents.
    **settings : Any
        Keyword arguments of ``ipr_sweep`` (``inits``, ``batch``, ``steps``, ``lr``, ...); defaults are
        the chapter's Fig. 5 (batch 1000, 4000 steps, the paper's other settings) with 8 initialisations.

    Returns
    -------
    dict[str, Any]
        ``ks``, ``settings``, and per sampler ``ipr`` (P, inits) final IPR (NaN for runs with non-finite
        weights) and ``nonfinite`` (P, inits) flags.
    """
    from localization.experiments import simulation as sim
    from localization.trajectory import diverged

    base = dict(n=40, inits=8, init_scale=1e-3, lr=0.1, batch=1000, steps=4000, checkpoints=2)
    base.update(settings)
    xi = sim.PAPER_FIG5.xi
    out: dict[str, Any] = dict(ks=[float(k) for k in ks], settings=base)
    k_init, k_data = jax.random.split(v.key("key", key))  # as ipr_sweep, which refuses non-finite weights
    w0 = sim.init_neurons(k_init, base["inits"], base["n"], base["init_scale"])
    kw = {name: base[name] for name in ("lr", "batch", "steps", "checkpoints", "n")}
    for sampler in SAMPLERS:
        tasks = [paper_sampler_task(k, xi, sampler) for k in ks]
        traj = train.train_sweep(k_data, tasks, w0, balanced=True, **kw)
        w = np.asarray(traj.weights, np.float64)[:, :, -1, :]  # (P, I, N)
        bad = diverged(w, axes=2)
        ipr = np.full(bad.shape, np.nan)
        if (~bad).any():
            ipr[~bad] = np.asarray(metrics.ipr(w[~bad]), np.float64)
        out[sampler] = dict(ipr=ipr.tolist(), nonfinite=bad.tolist())
    return out


def paper_samplers_fig7(key: jax.Array, *, streams: int = 10, steps: int = 250, lr: float = 80.0) -> dict[str, Any]:
    """Train Fig. 7's two-layer sigmoid networks on Kur(4) with each sampler, as the chapter's lr-80 test.

    ``streams`` data streams (keys ``fold_in(key, j)``), the networks of
    :data:`localization.experiments.many_neurons.FIG7_SIGMOID_KUR4` (8 per stream) at learning rate
    ``lr`` for ``steps`` steps; each sampler sees the same keys.

    Parameters
    ----------
    key : jax.Array
        A JAX PRNG key.
    streams : int
        Number of data streams, >= 1.
    steps : int
        SGD steps, >= 1.
    lr : float
        Learning rate, > 0.

    Returns
    -------
    dict[str, Any]
        ``settings`` and, per sampler, ``diverged`` (streams, inits) flags.
    """
    from localization.experiments import many_neurons as mn

    streams = v.integer("streams", streams, 1)
    top = mn.FIG7_SIGMOID_KUR4.replace(steps=v.integer("steps", steps, 1), lr=v.positive("lr", lr))
    out: dict[str, Any] = dict(settings=dataclasses.asdict(top), streams=streams)
    for sampler in SAMPLERS:
        task = paper_sampler_task(top.param, top.xi, sampler)
        settings = _fixed_task_settings_class()(**dataclasses.asdict(top), fixed_task=task)
        div = [mn.train_population(jax.random.fold_in(key, j), settings).diverged for j in range(streams)]
        out[sampler] = dict(diverged=np.asarray(div).tolist())
    return out


def _fixed_task_settings_class():
    from localization.experiments import many_neurons as mn

    @dataclasses.dataclass(frozen=True)
    class FixedTaskSettings(mn.PopulationSettings):
        """Population settings whose task is given (here: the paper's sampler) instead of named."""

        fixed_task: Any = None

        def task(self) -> data.LengthscaleTask:
            return self.fixed_task

    return FixedTaskSettings


def record_paper_samplers(path: str | Path = PAPER_SAMPLERS_RECORD, seed: int = 0) -> dict[str, Any]:
    """Run :func:`paper_samplers_fig5` and :func:`paper_samplers_fig7` and write their record (JSON).

    Command: ``python -m localization.experiments.data_properties`` (float64 enabled, as the
    float64 reproduction needs it). Key: ``jax.random.key(seed)``, folded with 5 and 7.

    Parameters
    ----------
    path : str or Path
        Output file.
    seed : int
        Seed of the record's key.

    Returns
    -------
    dict[str, Any]
        The record (also written to ``path``).
    """
    import json
    import subprocess
    import time

    from localization.data import paper_samplers as ps

    seed = v.integer("seed", seed, 0)
    key = jax.random.key(seed)
    t0 = time.time()
    fig5 = paper_samplers_fig5(jax.random.fold_in(key, 5))
    fig7 = paper_samplers_fig7(jax.random.fold_in(key, 7))
    try:
        commit = subprocess.run(["git", "rev-parse", "HEAD"], capture_output=True, text=True, check=True).stdout.strip()
    except (OSError, subprocess.CalledProcessError):
        commit = "unknown"
    record = dict(
        command="python -m localization.experiments.data_properties",
        seed=seed,
        commit=commit,
        jax=jax.__version__,
        seconds=round(time.time() - t0, 1),
        paper_code=ps.PAPER_CODE,
        overflow_float32=ps.paper_kur_overflow(5.0, "float32"),
        fig5=fig5,
        fig7=fig7,
    )
    with open(path, "w") as f:
        json.dump(record, f, indent=1)
    return record


def read_paper_samplers(path: str | Path = PAPER_SAMPLERS_RECORD) -> dict[str, Any]:
    """Read the record of :func:`record_paper_samplers`, with its lists as NumPy arrays.

    Parameters
    ----------
    path : str or Path
        The record (default ``book/data/paper_samplers.json``).

    Returns
    -------
    dict[str, Any]
        The record; ``fig5[sampler]["ipr"]`` (P, inits) float64 and ``fig5[sampler]["nonfinite"]``,
        ``fig7[sampler]["diverged"]`` (streams, inits) bool arrays.
    """
    import json

    with open(path) as f:
        rec = json.load(f)
    for sampler in SAMPLERS:
        rec["fig5"][sampler]["ipr"] = np.asarray(rec["fig5"][sampler]["ipr"], np.float64)
        rec["fig5"][sampler]["nonfinite"] = np.asarray(rec["fig5"][sampler]["nonfinite"], bool)
        rec["fig7"][sampler]["diverged"] = np.asarray(rec["fig7"][sampler]["diverged"], bool)
    return rec


if __name__ == "__main__":
    import localization

    localization.enable_float64()
    rec = record_paper_samplers()
    print(f"wrote {PAPER_SAMPLERS_RECORD} in {rec['seconds']} s")
