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

What the chapter's figures show (drawn by :mod:`localization.figures.data`): the samples, covariances
and marginal draws of paper Fig. 2 (:data:`FIG2_MODELS`, :func:`model_row_samples`,
:func:`data_model_samples`), the spectra of the wrapped and the periodised kernels
(:func:`kernel_spectra`) and the correlations of the paper code's Metropolis chains
(:func:`paper_chain_correlations`).

Exact and independent computations behind the chapter's checks: the Ising chain's joint laws and
S1 mixing coefficients in high precision (:func:`ising_ring_law`, :func:`alpha_first_vs_rest`,
:func:`s1_blocks`, :func:`ising_s1_mixing`) and by enumeration (:func:`enumerate_ising`); the
wrapped kernel's spectrum (:func:`wrapped_kernel_spectrum`); quadratures of the NLGP covariance and
kurtosis and of the elliptical kurtoses (:func:`nlgp_pair_moment`, :func:`nlgp_kurtosis_quad`,
:func:`sphere_kurtosis_quad`, :func:`radial_kurtosis_quad`); the Kolmogorov–Smirnov distance
(:func:`ks_distance`); and the chapter's two tables (:func:`kurtosis_table`, :func:`verdict`,
:func:`kurtosis_markdown`, :func:`property_markdown`).
"""

from __future__ import annotations

import dataclasses
from pathlib import Path
from typing import TYPE_CHECKING, Any, NamedTuple

import jax
import numpy as np

from localization import data, metrics, records, train
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
    "FIG2_MODELS",
    "ModelRowSamples",
    "model_row_samples",
    "data_model_samples",
    "kernel_spectra",
    "paper_chain_correlations",
    "ising_ring_law",
    "alpha_first_vs_rest",
    "s1_blocks",
    "ising_s1_mixing",
    "wrapped_kernel_spectrum",
    "enumerate_ising",
    "nlgp_pair_moment",
    "nlgp_kurtosis_quad",
    "sphere_kurtosis_quad",
    "radial_kurtosis_quad",
    "ks_distance",
    "kurtosis_table",
    "verdict",
    "kurtosis_markdown",
    "property_markdown",
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
    import time

    from localization.data import paper_samplers as ps

    seed = v.integer("seed", seed, 0)
    key = jax.random.key(seed)
    t0 = time.time()
    fig5 = paper_samplers_fig5(jax.random.fold_in(key, 5))
    fig7 = paper_samplers_fig7(jax.random.fold_in(key, 7))
    commit = records.commit()
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
    records.write(path, record)
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


# --- what the chapter's figures show (drawn by localization.figures.data) -----------------------------

#: Columns of the paper's Fig. 2 as redrawn by the data chapter: (label, long-lengthscale model,
#: short-lengthscale model) for the models of the paper's Fig. 3 (Ising J = 1.2 / 0.3, NLGP(0.01) and
#: Kur(5) with ξ = 5 / 1).
FIG2_MODELS = (
    ("Ising", data.Ising(J=1.2), data.Ising(J=0.3)),
    ("NLGP(0.01)", data.NLGP(xi=5.0, gain=0.01), data.NLGP(xi=1.0, gain=0.01)),
    ("Kur(5)", data.Kur(xi=5.0, k=5.0), data.Kur(xi=1.0, k=5.0)),
)


class ModelRowSamples(NamedTuple):
    """One data model's panels of Fig. 2 (:func:`model_row_samples`).

    Attributes
    ----------
    model_long, model_short : DataModel
        The models of the classes y = 1 and y = 0.
    long, short : np.ndarray
        (n,) one sample of each model.
    covariance : np.ndarray
        (n, n) the long-lengthscale model's covariance.
    marginal_draws : np.ndarray
        (num_marginal,) draws of the long-lengthscale model's marginal law.
    """

    model_long: DataModel
    model_short: DataModel
    long: np.ndarray
    short: np.ndarray
    covariance: np.ndarray
    marginal_draws: np.ndarray


def model_row_samples(
    key: jax.Array, model_long: DataModel, model_short: DataModel, n: int, num_marginal: int = 20_000
) -> ModelRowSamples:
    """Draw what one data model's row of Fig. 2 shows: two samples, the covariance, marginal draws.

    Parameters
    ----------
    key : jax.Array
        PRNG key, split in three: the long sample, the short sample and the marginal's draws.
    model_long, model_short : DataModel
        The models of the classes y = 1 and y = 0.
    n : int
        Input size, >= 2.
    num_marginal : int
        Draws of the long model's marginal law, >= 1.

    Returns
    -------
    ModelRowSamples
        The samples (n,), the long model's covariance (n, n) and the marginal draws (num_marginal,).
    """
    from localization.data.base import DataModel

    n = v.integer("n", n, 2)
    num_marginal = v.integer("num_marginal", num_marginal, 1)
    for name, model in (("model_long", model_long), ("model_short", model_short)):
        if not isinstance(model, DataModel):
            raise TypeError(f"{name} must be a data model, got {type(model).__name__}")
    k_long, k_short, k_marg = jax.random.split(key, 3)
    return ModelRowSamples(
        model_long,
        model_short,
        np.asarray(model_long.sample(k_long, 1, n))[0],
        np.asarray(model_short.sample(k_short, 1, n))[0],
        np.asarray(model_long.covariance(n)),
        np.asarray(model_long.marginal.sample(k_marg, num_marginal)),
    )


def data_model_samples(key: jax.Array, n: int = 100, num_marginal: int = 20_000) -> dict[str, ModelRowSamples]:
    """Draw paper Fig. 2's panels: :func:`model_row_samples` of each column of :data:`FIG2_MODELS`.

    Parameters
    ----------
    key : jax.Array
        PRNG key; column ``i`` uses ``jax.random.fold_in(key, i)``.
    n : int
        Input size, >= 2.
    num_marginal : int
        Draws of each marginal law, >= 1.

    Returns
    -------
    dict
        Column label → :class:`ModelRowSamples`, in the order of :data:`FIG2_MODELS`.
    """
    return {
        label: model_row_samples(jax.random.fold_in(key, i), long_model, short_model, n, num_marginal)
        for i, (label, long_model, short_model) in enumerate(FIG2_MODELS)
    }


def kernel_spectra(xis: tuple[float, ...], n: int) -> dict[float, tuple[np.ndarray, np.ndarray]]:
    """Sorted eigenvalues of the wrapped and of the periodised covariance kernels at each ξ (float64).

    The wrapped kernel's are :func:`localization.data.spectral.circulant_eigenvalues` of its first row
    (:func:`localization.data.min_distance_covariance`); the periodised kernel's are those of
    :func:`localization.data.covariance` (``numpy.linalg.eigvalsh``).

    Parameters
    ----------
    xis : tuple of float
        Length-scales, each > 0.
    n : int
        Input size, >= 2.

    Returns
    -------
    dict
        ξ → (wrapped kernel's eigenvalues, periodised kernel's), each (n,) sorted.
    """
    from localization.data import spectral

    n = v.integer("n", n, 2)
    out = {}
    for xi in xis:
        xi = v.positive("xi", xi)
        row = np.asarray(data.min_distance_covariance(xi, n))[0]
        periodised = np.linalg.eigvalsh(np.asarray(data.covariance(xi, n)))
        out[xi] = (np.sort(spectral.circulant_eigenvalues(row)), np.sort(periodised))
    return out


def paper_chain_correlations(
    key: jax.Array, J: float = 1.2, n: int = 100, num: int = 1000, *, num_flips: int = 1000
) -> dict[str, np.ndarray]:
    """Correlations by distance of the paper code's Metropolis Ising chains (Fig. 2's setting).

    ``num`` chains of :func:`localization.data.paper_samplers.paper_metropolis_ising` after
    ``num_flips`` proposals each, against the exact correlation :func:`localization.data.ising_correlation`.

    Parameters
    ----------
    key : jax.Array
        PRNG key of the chains.
    J : float
        Coupling (Fig. 2: 1.2).
    n : int
        Chain length, >= 2 (Fig. 2: 100).
    num : int
        Number of chains, >= 1.
    num_flips : int
        Proposals per chain, >= 0 (the code's 1000).

    Returns
    -------
    dict
        ``exact``, ``c`` (the chains' mean of ``metrics.circular_autocorr``) and ``se`` (its standard
        error), each (n,) over the distances 0..n-1.
    """
    from localization.data import paper_samplers as ps

    x = np.asarray(ps.paper_metropolis_ising(key, J, n, num, num_flips=num_flips))
    c, se = metrics.mean_and_se(metrics.circular_autocorr(x))
    return dict(exact=data.ising_correlation(J, n, np.arange(n)), c=np.asarray(c), se=np.asarray(se))


# --- exact and independent computations behind the chapter's checks ----------------------------------


def _mp(dps: int):
    import mpmath

    ctx = mpmath.MPContext()
    ctx.dps = v.integer("dps", dps, 15)
    return ctx


def ising_ring_law(J: float, sites: tuple[int, ...], n: int, *, dps: int = 80) -> dict[tuple[int, ...], Any]:
    r"""Exact joint law of the spins at ``sites`` of the periodic Ising chain :math:`e^{J\sum_i x_ix_{i+1}}`.

    With the transfer matrix :math:`T` (normalised by :math:`2\cosh J`, so that powers up to
    ``n = 1000`` do not overflow) and the projections :math:`P_{\pm}` on one spin state,
    :math:`\mathbb P(x_s = a_s\ \forall s) = \operatorname{tr}\prod_s P_{a_s}T^{g_s} / \operatorname{tr}T^n`,
    :math:`g_s` the gap to the next site around the ring, in ``dps``-digit arithmetic (mpmath).

    Parameters
    ----------
    J : float
        Coupling, >= 0 (its decimal ``repr`` is read at ``dps`` digits: ``0.7`` is exactly 7/10).
    sites : tuple of int
        Strictly increasing 0-based sites in ``[0, n - 1]``.
    n : int
        Ring size, >= 2.
    dps : int
        Decimal digits, >= 15.

    Returns
    -------
    dict
        Spin tuple (one entry ±1 per site) -> probability (mpmath number).
    """
    import itertools

    J = v.nonnegative("J", J)
    n = v.integer("n", n, 2)
    sites = tuple(v.integer("sites", s, 0, n - 1) for s in sites)
    if not sites or any(b <= a for a, b in zip(sites, sites[1:], strict=False)):
        raise ValueError(f"sites must be a non-empty strictly increasing tuple in [0, {n - 1}], got {sites}")
    ctx = _mp(dps)
    j = ctx.mpf(repr(J))
    T = ctx.matrix([[ctx.exp(j), ctx.exp(-j)], [ctx.exp(-j), ctx.exp(j)]]) / (2 * ctx.cosh(j))
    project = {+1: ctx.diag([1, 0]), -1: ctx.diag([0, 1])}
    gaps = [b - a for a, b in zip(sites, list(sites[1:]) + [sites[0] + n], strict=True)]
    norm = sum((T**n)[i, i] for i in range(2))
    law = {}
    for spins in itertools.product((+1, -1), repeat=len(sites)):
        m = ctx.eye(2)
        for a, gap in zip(spins, gaps, strict=True):
            m = m * project[a] * T**gap
        law[spins] = (m[0, 0] + m[1, 1]) / norm
    return law


def alpha_first_vs_rest(law: dict[tuple[int, ...], Any]) -> Any:
    r"""Mixing coefficient between the first spin and the others of a joint law on :math:`\{\pm1\}^m`.

    :math:`\alpha = \sup_{A,B}|\mathbb P(A\cap B) - \mathbb P(A)\mathbb P(B)|` over events :math:`A` of
    the first spin and :math:`B` of the rest, which equals
    :math:`\sum_b (\mathbb P(X_1 = 1, \text{rest} = b) - \mathbb P(X_1 = 1)\mathbb P(\text{rest} = b))^+`.

    Parameters
    ----------
    law : dict
        Spin tuple (length >= 2, entries ±1) -> probability, summing to 1.

    Returns
    -------
    number
        The coefficient, in the arithmetic of the probabilities.
    """
    if not law or any(len(s) < 2 for s in law):
        raise ValueError("law must map spin tuples of length >= 2 to probabilities")
    p_up = sum(p for spins, p in law.items() if spins[0] == +1)
    rest: dict[tuple[int, ...], Any] = {}
    for spins, p in law.items():
        rest[spins[1:]] = rest.get(spins[1:], 0) + p
    return sum(max(law.get((+1, *b), 0) - p_up * p_b, 0) for b, p_b in rest.items())


def s1_blocks(n: int, rho: float = 0.25) -> tuple[tuple[int, int], tuple[int, int]]:
    r"""0-based end sites of the far blocks of S1 for :math:`X_1` (site 0) on a ring of ``n``.

    Returns ``(paper, circular)``: the paper's block :math:`X_i,\ i > \rho N` (1-based), and the block
    at circular distance :math:`d(i, 1) > \rho N`. ``rho`` must lie in ``(0, 1/2)``, ``n >= 4``.
    """
    n = v.integer("n", n, 4)
    rho = v.in_range("rho", rho, 0.0, 0.5, low_open=True, high_open=True)
    q = int(_mp(80).mpf(repr(rho)) * n)
    return (q, n - 1), (q + 1, n - q - 1)


def ising_s1_mixing(
    J: float = 0.7, rho: float = 0.25, ns: tuple[int, ...] = (12, 40, 200, 1000), *, dps: int = 80
) -> dict[int, dict[str, Any]]:
    r"""S1 for the periodic Ising chain, exactly: the paper's far block against the circular one.

    The chain is Markov, so :math:`X_1` depends on a block of consecutive spins only through its two
    end spins: :func:`alpha_first_vs_rest` of the law of (:math:`X_1`, the two ends) from
    :func:`ising_ring_law` is the block's mixing coefficient.

    Parameters
    ----------
    J : float
        Coupling, >= 0.
    rho : float
        S1's fraction, in ``(0, 1/2)``.
    ns : tuple of int
        Ring sizes, each >= 4.
    dps : int
        Decimal digits.

    Returns
    -------
    dict
        ``n`` -> ``corr`` (:math:`\mathbb E[x_1x_N]` from the law), ``closed``
        (:math:`(t + t^{N-1})/(1+t^N)`, :math:`t = \tanh J`), ``paper`` and ``circular`` (the two
        mixing coefficients); mpmath numbers.
    """
    ctx = _mp(dps)
    t = ctx.tanh(ctx.mpf(repr(v.nonnegative("J", J))))
    rows = {}
    for n in ns:
        neighbours = ising_ring_law(J, (0, n - 1), n, dps=dps)
        paper, circular = s1_blocks(n, rho)
        rows[n] = dict(
            corr=sum(a * b * p for (a, b), p in neighbours.items()),
            closed=(t + t ** (n - 1)) / (1 + t**n),
            paper=alpha_first_vs_rest(ising_ring_law(J, (0, *paper), n, dps=dps)),
            circular=alpha_first_vs_rest(ising_ring_law(J, (0, *circular), n, dps=dps)),
        )
    return rows


def wrapped_kernel_spectrum(xi: float, n: int, *, dps: int = 80) -> list[Any]:
    r"""Sorted eigenvalues of the paper code's wrapped kernel :math:`e^{-d_{ij}^2/\xi^2}` in ``dps`` digits.

    The DFT of the first row of the symmetric circulant, from the definition (mpmath), so that the
    sign of an eigenvalue of order :math:`10^{-13}` is not a rounding artefact. ``xi > 0``, ``n >= 2``.
    """
    ctx = _mp(dps)
    xi = v.positive("xi", xi)
    n = v.integer("n", n, 2)
    row = [ctx.exp(-(ctx.mpf(min(d, n - d)) ** 2) / ctx.mpf(xi) ** 2) for d in range(n)]
    cosines = [ctx.cos(2 * ctx.pi * k / n) for k in range(n)]  # cos(2 pi j d / n) = cosines[j d mod n]
    return sorted(ctx.fsum(row[d] * cosines[j * d % n] for d in range(n)) for j in range(n))


def enumerate_ising(J: float, n: int, sign: float = 1.0) -> tuple[np.ndarray, np.ndarray]:
    r"""All :math:`2^n` states of the periodic chain and their weights :math:`\propto e^{\pm J\sum_i x_ix_{i+1}}`.

    Parameters
    ----------
    J : float
        Coupling, finite.
    n : int
        Ring size, in ``[2, 16]``.
    sign : float
        +1 for Eq. (2) as the book writes it (ferromagnet), -1 for the sign the paper prints.

    Returns
    -------
    states : np.ndarray
        (2**n, n) float64 spins, in ``itertools.product([-1, 1], repeat=n)`` order.
    weights : np.ndarray
        (2**n,) float64 probabilities, summing to 1.
    """
    import itertools

    J = v.real_scalar("J", J)
    n = v.integer("n", n, 2, 16)
    if sign not in (1.0, -1.0):
        raise ValueError(f"sign must be +1 or -1, got {sign}")
    states = np.array(list(itertools.product([-1.0, 1.0], repeat=n)))
    energy = sign * J * np.sum(states * np.roll(states, -1, axis=1), axis=1)
    w = np.exp(energy - np.max(energy))
    return states, w / w.sum()


def _quad(f, a: float, b: float, **kw) -> float:
    from scipy import integrate

    return integrate.quad(f, a, b, limit=400, **kw)[0]


def nlgp_pair_moment(g: float, rho: float) -> float:
    r""":math:`\mathbb E[\operatorname{erf}(gZ_1)\operatorname{erf}(gZ_2)]` for standard normals of correlation ``rho``.

    An independent route to the NLGP covariance: averaging :math:`\operatorname{erf}(gZ_2)` over
    :math:`Z_2 \mid Z_1` in closed form leaves the one-dimensional integral
    :math:`\mathbb E_{Z_1}[\operatorname{erf}(gZ_1)\operatorname{erf}(g\rho Z_1/\sqrt{1+2g^2(1-\rho^2)})]`,
    computed by adaptive quadrature (relative 1e-13). ``g > 0``, ``rho`` in ``[-1, 1]``.
    """
    import math

    from scipy import special

    g = v.positive("g", g)
    rho = v.in_range("rho", rho, -1.0, 1.0)
    s = math.sqrt(1 + 2 * g**2 * (1 - rho**2))

    def f(z):
        return special.erf(g * z) * special.erf(g * rho * z / s) * math.exp(-z * z / 2) / math.sqrt(2 * math.pi)

    return 2 * _quad(f, 0, 40, points=[min(1 / g, 20), 1.0], epsabs=1e-15, epsrel=1e-13)


def nlgp_kurtosis_quad(g: float) -> float:
    r"""Excess kurtosis of NLGP(g)'s marginal, :math:`m_4/m_2^2 - 3`, :math:`m_p = \mathbb E[\operatorname{erf}(gZ)^p]`.

    Each moment by adaptive quadrature (relative 1e-13), independently of the library's
    :class:`~localization.data.NLGP`. ``g > 0``.
    """
    import math

    from scipy import special

    g = v.positive("g", g)

    def mom(p):
        def f(z):
            return special.erf(g * z) ** p * math.exp(-z * z / 2) / math.sqrt(2 * math.pi)

        return 2 * _quad(f, 0, 40, points=[min(1 / g, 20), 1.0], epsabs=0, epsrel=1e-13)

    return mom(4) / mom(2) ** 2 - 3


def sphere_kurtosis_quad(dim: int) -> float:
    r"""Excess kurtosis of one coordinate of the uniform law on the sphere :math:`S^{D-1}` (``dim`` = D >= 4).

    By quadrature of the density of :math:`\sqrt D U_1`, proportional to
    :math:`(1 - x^2/D)^{(D-3)/2}`; the closed form is :math:`-6/(D+2)`.
    """
    import math

    D = v.integer("dim", dim, 4)

    def moment(m):
        return _quad(lambda x: x**m * (1 - x * x / D) ** ((D - 3) / 2), 0, math.sqrt(D), epsabs=0, epsrel=1e-13)

    return moment(4) * moment(0) / moment(2) ** 2 - 3


def radial_kurtosis_quad(dim: int) -> float:
    r"""Excess kurtosis of a coordinate of the radial elliptical law in dimension ``dim`` (D >= 2).

    :math:`\mathbb E[R^m]` by quadrature of :math:`p_R(r) = 4e^{2r+4}/(e^{2r}+e^4)^2`, :math:`r \ge 2`,
    then :math:`\operatorname{Kurt} = \mathbb E[R^4]/\mathbb E[R^2]^2 \cdot 3D/(D+2)` (the chapter's
    elliptical kurtosis equation).
    """
    D = v.integer("dim", dim, 2)

    def moment(m):
        def f(r):
            return r**m * 4 * np.exp(2 * r + 4 - 2 * np.logaddexp(2 * r, 4.0))

        return _quad(f, 2, np.inf, epsabs=0, epsrel=1e-13)

    return moment(4) / moment(2) ** 2 * 3 * D / (D + 2) - 3


def ks_distance(cdf_sorted: Any) -> float:
    r"""Kolmogorov–Smirnov distance :math:`D_n` of a sample, given the CDF at its sorted draws.

    :math:`D_n = \max_i \max(i/n - F(x_{(i)}),\ F(x_{(i)}) - (i-1)/n)`; ``cdf_sorted`` is a
    non-empty 1-D array of values in ``[0, 1]``, non-decreasing.
    """
    F = np.asarray(cdf_sorted, np.float64)
    if F.ndim != 1 or F.size == 0 or np.any(np.isnan(F)) or F.min() < 0 or F.max() > 1:
        raise ValueError(f"cdf_sorted must be a non-empty 1-D array of values in [0, 1], got shape {F.shape}")
    n = F.size
    return float(max(np.max(np.arange(1, n + 1) / n - F), np.max(F - np.arange(n) / n)))


def kurtosis_table() -> list[dict[str, Any]]:
    r"""Return the chapter's table of exact marginal excess kurtoses, beside what the paper says.

    Returns
    -------
    list of dict
        One row per model and parameter: ``model``, ``parameter`` (Markdown), ``value`` (the
        library's exact excess kurtosis; the :math:`k\to\infty` limit of Kur by quadrature of the
        uniform law), ``paper`` (what the paper says, with its section) and ``test`` (the paper's
        statement as a predicate of the exact value, or ``None`` if it says nothing).
    """
    from scipy import integrate

    def positive(x):
        return x > 0

    def negative(x):
        return x < 0

    def rounds_to(target):
        return lambda x: round(x, 2) == target

    def row(model, parameter, value, paper="—", test=None):
        return dict(model=model, parameter=parameter, value=value, paper=paper, test=test)

    def nlgp(g):
        return data.NLGP(xi=1.0, gain=g).marginal.excess_kurtosis

    def kur(k):
        return data.Kur(xi=1.0, k=k).marginal.excess_kurtosis

    uniform = integrate.quad(lambda u: u**4 / 2, -1, 1)[0] / integrate.quad(lambda u: u**2 / 2, -1, 1)[0] ** 2 - 3
    return [
        row("Ising", "any $J$", data.Ising(J=0.7).marginal.excess_kurtosis, "$-2$ (Sec. 4.1)", lambda x: x == -2),
        row("single pulse (notes 001)", "any", data.SinglePulse(low=0.2, high=0.4).marginal.excess_kurtosis),
        row("NLGP", "$g = 0.01$", nlgp(0.01), "positive (Sec. 4.1)", positive),
        *[
            row("NLGP", f"$g = {g:g}$", nlgp(g), "in $(-2, 0)$ (Sec. 2.3)", lambda x: -2 < x < 0)
            for g in (1.1, 3.0, 100.0)
        ],
        row("Kur", "$k = 3$", kur(3.0), "7.66 (Sec. 4.4)", rounds_to(7.66)),
        row("Kur", "$k = 4$", kur(4.0), "3.28 (Sec. 4.4, Figs. 6, 7)", rounds_to(3.28)),
        row("Kur", "$k = 5$", kur(5.0), "positive (Sec. 4.1)", positive),
        row("Kur", "$k = 5.8$", kur(5.8), "positive ($k \\le 5.8$, Sec. 2.3)", positive),
        row("Kur", "$k = 5.9$", kur(5.9), "negative ($k \\ge 5.9$, Sec. 2.3)", negative),
        row("Kur", "$k = 10$", kur(10.0), "$-0.93$ (Sec. 4.4)", rounds_to(-0.93)),
        row("Kur", "$k = 30$", kur(30.0), "$-1.17$ (Sec. 4.4)", rounds_to(-1.17)),
        row("Kur", "$k \\to \\infty$ (uniform)", uniform),
        row("Gaussian, Gaussian clone", "—", data.Gaussian(xi=1.0).marginal.excess_kurtosis),
        row(
            "Student-$t$",
            "$\\nu = 3$",
            data.StudentT(xi=1.0, nu=3.0).marginal.excess_kurtosis,
            "infinite (Sec. 4.3)",
            lambda x: x == float("inf"),
        ),
        row("Student-$t$", "$\\nu = 5$", data.StudentT(xi=1.0, nu=5.0).marginal.excess_kurtosis),
        row("ellipse surface", "$D = 40$", data.EllipseSurface(xi=1.0).marginal.excess_kurtosis),
        row("radial elliptical", "$D = 40$", data.RadialElliptical(xi=1.0).marginal.excess_kurtosis),
    ]


def verdict(row: dict[str, Any]) -> str:
    """``"agrees"``, ``"disagrees"`` or ``""`` (the paper says nothing): a :func:`kurtosis_table` row's verdict."""
    if row["test"] is None:
        return ""
    return "agrees" if row["test"](row["value"]) else "disagrees"


def kurtosis_markdown(rows: list[dict[str, Any]]) -> str:
    """Return the Markdown table of :func:`kurtosis_table` rows, with each verdict (disagreements in bold)."""

    def fmt(x):
        if x == float("inf"):
            return "$+\\infty$"
        return "0" if x == 0 else f"{x:.4f}" if abs(x) >= 1e-3 else f"{x:.3e}"

    lines = [
        f"| {r['model']} | {r['parameter']} | {fmt(r['value'])} | {r['paper']} | "
        + verdict(r).replace("disagrees", "**disagrees**")
        + " |"
        for r in rows
    ]
    head = "| model | parameter | exact excess kurtosis | paper says | verdict |\n|---|---|---|---|---|\n"
    return head + "\n".join(lines)


def property_markdown(props: dict[str, dict[str, Any]]) -> str:
    """Return the Markdown table of :func:`property_statistics` results, one row per model name."""

    def cell(m, s):
        return f"{m:+.4f} ± {s:.4f}" if s > 0 else "— (event trivial for ±1 data)"

    head = (
        "| model | S3: max \\|z\\| | S2: max \\|z\\| | S1: sign events, $d=N/2$ "
        "| S1: large-value events, $d=N/2$ | $\\Sigma_{0,N/2}$ |\n|---|---|---|---|---|---|\n"
    )
    return head + "\n".join(
        f"| {name} | {p['s3']:.1f} | {p['s2']:.1f} | "
        + " | ".join(cell(m, s) for m, s in p["alpha"])
        + f" | {p['corr']:.1e} |"
        for name, p in props.items()
    )


if __name__ == "__main__":
    import localization

    localization.enable_float64()
    rec = record_paper_samplers()
    print(f"wrote {PAPER_SAMPLERS_RECORD} in {rec['seconds']} s")
