r"""Does the theory predict localization on *your* data? The prediction and a short training run to check it.

* :func:`predict` — from samples of a data set (an (S, N) array of S samples, or (S, h, w) patches):
  the excess kurtosis of each coordinate and of the pooled standardised marginal with a bootstrap
  interval, the amplifier φ of paper Eq. (6) on a grid with a bootstrap band, and the verdict of the
  paper's sign rule (:func:`localization.theory.prediction.sign_rule`) — a :class:`Prediction`;
* :func:`train_on_samples` — a short online SGD of the paper's single ReLU neuron on the data (y = 1)
  against white Gaussian noise (default; the paper's length-scale task with a class 0 of no
  correlations) or against the data's Gaussian clone (``data.empirical.CloneTask``), from several
  Xavier-normal starts; its fields are judged by the book's one definition,
  :func:`localization.field_analysis.is_localized` — an :class:`OwnDataRun`, whose
  :meth:`OwnDataRun.agrees_with` compares it with a prediction.

The command ``python -m localization predict FILE [--train]`` prints both.

**The bootstrap.** The coordinates of one sample are dependent (neighbouring pixels of a patch), so
the bootstrap resamples whole samples (rows) with replacement, ``resamples`` times, and recomputes the
estimator on each resample as it is computed on the data: every coordinate z-scored again, then
pooled. For the excess kurtosis this is exact and cheap, from per-coordinate power sums (a resample
is a (S,) vector of counts, and its power sums one matrix product). For φ it is exact (every resample
z-scored and Eq. (6) evaluated on it) while resamples × S × N × P stays within :data:`EXACT_BUDGET`.
Beyond, the re-standardisation inside the integrand :math:`g_a(x)=x\,\mathrm{erf}(xa/\sqrt{2(1-a^2)})` is
expanded in each coordinate's resample shift :math:`m` and second moment :math:`e_2`: with
:math:`g_a = q\,x^2 + R_a`, :math:`q=\mathbb E[Xg_a'(X)]/2`, the :math:`x^2` part is exact (a z-scored
coordinate has :math:`\mathbb E^*[X^2]=1` in every resample) and :math:`R_a` is taken to first order in
:math:`e_2-1` and second order in :math:`m`,

.. math::

   \mathbb E^*[g_a(X')]\approx\mathbb E^*[g_a(X)]-\tfrac12(e_2-1)\,\mathbb E[Xg_a'(X)]

   \qquad-m\,\mathbb E[g_a'(X)]+\tfrac12 m^2\bigl(\mathbb E[g_a''(X)]-2q\bigr).

Its error is :math:`O(S^{-3/2})`-small against the spread of the resamples: measured against the exact
recomputation at S = 5000, N = 40 (NLGP(g = 10), Kur(k = 8), Gaussian), at most 0.25 of the
resamples' standard deviation for any resample and point (``tests/test_prediction.py``).
Intervals and bands are BCa (bias-corrected and accelerated) bootstrap intervals: percentiles of the
resamples at levels moved by the estimator's bias (the share of resamples below the estimate) and
skewness (the acceleration, from each sample's influence: exact for the kurtosis by leave-one-out
power sums, to first order for φ). The plain percentile interval doubles the bias of the kurtosis
estimator that the resamples reproduce. Coverage of the nominal 95 % kurtosis interval measured on 60
data sets each (N = 12): NLGP(ξ=2, g=1) at S = 300, 54 (percentile: 50); Gaussian(ξ=2) at S = 400, 53
(54); Student t(ν=12) at S = 1000, 47 (47); t(ν=8), 42 (40); Kur(5) at S = 2000, 36 (32): heavy tails
(a divergent eighth moment) under-cover whatever the interval, yet the verdict's sign was right in
every one of those 60 for the four non-Gaussian laws.
"""

from __future__ import annotations

from functools import partial
from typing import Any, NamedTuple

import jax
import jax.numpy as jnp
import numpy as np
from scipy.special import ndtr, ndtri

from localization import data, field_analysis, initialisation, metrics, train
from localization import validation as v
from localization.data.empirical import CloneTask, EmpiricalModel
from localization.data.ring import RingModel
from localization.theory import prediction as rule

__all__ = [
    "LR",
    "BATCH",
    "STEPS",
    "INIT_SCALE",
    "EXACT_BUDGET",
    "AGAINST",
    "GEOMETRIES",
    "WHITE_XI",
    "Prediction",
    "predict",
    "OwnDataRun",
    "train_on_samples",
]

#: Default learning rate, batch and steps of :func:`train_on_samples` (see its docstring for why).
LR, BATCH, STEPS = 0.1, 2000, 3000
#: Variance multiplier of the Xavier-normal starts (the single neuron's reference value).
INIT_SCALE = 1e-3
#: The classes y = 0 :func:`train_on_samples` can train the data against.
AGAINST = ("white", "clone")

#: How the samples are laid out in training (:func:`train_on_samples`).
GEOMETRIES = ("ring", "line")
#: Length-scale of ``data.Gaussian`` used as white noise: its covariance is the identity to 1e-43.
WHITE_XI = 0.1
#: Training runs in this many segments (one progress-bar tick each); the result does not depend on
#: whether a bar is shown.
_SEGMENTS = 10
#: Entries of the (replicates, S) count matrix formed at once by the bootstrap (memory bound).
_COUNTS_BUDGET = 4_000_000
#: The bootstrap recomputes φ exactly on every resample while resamples × S × N × P evaluations of
#: Eq. (6)'s integrand stay within this budget (~1 s on one CPU core), and by the expansion of the
#: module docstring beyond it (200 resamples of 20,000 × 40 samples at 21 points: 3.4e9).
EXACT_BUDGET = 250_000_000
#: Entries of (rows, N, P) slopes evaluated at once by the expansion (memory bound, ~17 MB).
_SLOPE_BLOCK = 1 << 21


class Prediction(NamedTuple):
    r"""What :func:`predict` finds in a data set.

    Attributes
    ----------
    verdict : str
        ``"localizes"``, ``"does not localize"`` or ``"undecided"``: the paper's :math:`N\to\infty` sign
        rule applied to ``kurtosis_interval`` (:func:`localization.theory.prediction.sign_rule`).
    n_samples, n_inputs : int
        S samples (before the model appends their negatives) of N = prod(shape) coordinates.
    shape : tuple of int
        The input's shape: ``(N,)`` for a ring, ``(h, w)`` for patches on a torus.
    level : float
        The confidence level of the interval and the bands.
    resamples : int
        Bootstrap resamples.
    excess_kurtosis : float
        Of the pooled standardised marginal (the law φ is computed from).
    kurtosis_interval : tuple of float
        Its BCa bootstrap interval (low, high) at ``level`` (module docstring).
    coordinate_kurtosis : np.ndarray, shape (N,)
        The excess kurtosis of each z-scored coordinate.
    a : np.ndarray, shape (P,)
        The points of (0, 1) where φ is evaluated.
    band_method : str
        How the resamples' φ was computed: ``"exact"`` or ``"expansion"`` (module docstring).
    amplifier : np.ndarray, shape (P,)
        φ(a) of the pooled standardised marginal (paper Eq. (6)).
    amplifier_band : np.ndarray, shape (2, P)
        Pointwise BCa bootstrap band of φ(a) (low row, high row).
    deviation, deviation_band : np.ndarray, shapes (P,) and (2, P)
        φ(a) - √(2/π) a (positive: super-linear) and its band.
    superlinear, sublinear : np.ndarray, shape (P,), bool
        Where the band of the deviation lies wholly above 0 (φ super-linear) or wholly below it. The
        sign rule speaks of a → 0 only; a φ super-linear at large a only (Kur(5)) does not localize
        the paper's task (the book's chapter *The mechanism*, exercise 3).
    """

    verdict: str
    n_samples: int
    n_inputs: int
    shape: tuple[int, ...]
    level: float
    resamples: int
    excess_kurtosis: float
    kurtosis_interval: tuple[float, float]
    coordinate_kurtosis: np.ndarray
    a: np.ndarray
    band_method: str
    amplifier: np.ndarray
    amplifier_band: np.ndarray
    deviation: np.ndarray
    deviation_band: np.ndarray
    superlinear: np.ndarray
    sublinear: np.ndarray

    def as_dict(self) -> dict[str, Any]:
        """Return the prediction as plain Python numbers and lists (JSON-ready; every number finite)."""
        out = {}
        for name, value in self._asdict().items():
            out[name] = value.tolist() if isinstance(value, np.ndarray) else value
        out["shape"] = list(self.shape)
        out["kurtosis_interval"] = list(self.kurtosis_interval)
        return out


def _model_of(samples: Any, shape: Any) -> EmpiricalModel:
    if isinstance(samples, EmpiricalModel):
        if shape is not None:
            raise ValueError("shape must be None when samples is already an EmpiricalModel (it has its shape)")
        return samples
    return EmpiricalModel.of(samples, shape)


def _bar(total: int, desc: str, progress: bool):
    from tqdm.auto import tqdm

    return tqdm(total=total, desc=desc, disable=not progress, leave=False)


@partial(jax.jit, static_argnums=1)
def _draw_rows(keys: jax.Array, size: int) -> jax.Array:
    """(R, S) row indices in [0, S), S = ``size``: resample r drawn with ``keys[r]`` alone."""
    return jax.vmap(lambda k: jax.random.randint(k, (size,), 0, size))(keys)


@jax.jit
def _exact_amplifiers(z: jax.Array, rows: jax.Array, a: jax.Array) -> jax.Array:
    """(R, P) φ(a) of each resample ``z[rows[r]]``, every coordinate z-scored again (population variance)."""

    def one(index):
        x = z[index]
        x = x - x.mean(axis=0)
        x = x / jnp.sqrt(jnp.mean(x * x, axis=0))
        return jax.lax.map(lambda point: jnp.mean(x * jax.scipy.special.erf(x * point)), a / jnp.sqrt(2 * (1 - a * a)))

    return jax.lax.map(one, rows)


class _Replicates(NamedTuple):
    terms: rule.AmplifierTerms  # Eq. (6)'s integrand on the data
    amplifier_estimate: np.ndarray  # (P,) phi on the data (theory.prediction.empirical_amplifier)
    kurtosis: np.ndarray  # (R,) on each resample
    amplifier: np.ndarray  # (R, P) on each resample
    method: str  # how the resamples' phi was computed: "exact" or "expansion"


@jax.jit
def _weighted_slopes(weights: jax.Array, z: jax.Array, a: jax.Array) -> jax.Array:
    """(R, 2 N P): ``weights`` (R, S) times g_a'(z) and z g_a'(z) (S, N, P), in float32."""
    _, slope, _ = rule.amplifier_integrand_core(z, a)
    both = jnp.concatenate([slope, z[..., None] * slope], axis=1).reshape(z.shape[0], -1)
    return weights @ both.astype(jnp.float32)


def _replicate_slopes(counts: np.ndarray, z: np.ndarray, a: np.ndarray) -> tuple[np.ndarray, np.ndarray]:
    """Each resample's means of g_a'(z_j) and z_j g_a'(z_j), (R, N, P) each, from its (R, S) counts.

    They multiply the resample's small shift and rescaling, so float32 products suffice.
    """
    S, N = z.shape
    rows = min(S, max(1, _SLOPE_BLOCK // (N * a.size)))
    # equal blocks (one compilation): zero rows of zero weight pad the last one
    size = -(-S // rows) * rows
    padded = np.zeros((size, N))
    padded[:S] = z
    weights = np.zeros((counts.shape[0], size), dtype=np.float32)
    weights[:, :S] = counts / S
    av = v.float64("a", a)
    total = np.zeros((counts.shape[0], 2 * N * a.size), dtype=np.float64)
    for start in range(0, size, rows):
        block = slice(start, start + rows)
        total += np.asarray(_weighted_slopes(weights[:, block], v.float64("z", padded[block]), av))
    slope_mean, moment_mean = total.reshape(counts.shape[0], 2, N, a.size).transpose(1, 0, 2, 3)
    return slope_mean, moment_mean


def _expanded_amplifiers(
    moments: np.ndarray, counts: np.ndarray, z: np.ndarray, a: np.ndarray, terms: rule.AmplifierTerms
) -> np.ndarray:
    """(R, P) φ(a) of each resample by the expansion of the module docstring."""
    S, N = z.shape
    centre, spread = z.mean(axis=0)[:, None], np.mean(z**2, axis=0)[:, None]  # (N, 1): 0 and 1 to 1e-9
    e1, e2 = moments[:, :N, None], moments[:, N : 2 * N, None]  # (R, N, 1)
    shift = e1 - centre
    stretch = np.sqrt(spread / (e2 - e1**2)) - 1.0  # t - 1: the resample's z-scoring multiplies by t
    (d10, d11, _), (d20, d21, d22) = terms.derivatives  # (N, P) each: means of z^k g^(d)
    q = d11 / (2 * spread)  # g = q x^2 + R: the x^2 part has mean q exactly in every resample
    slope_mean, moment_mean = _replicate_slopes(counts, z, a)
    remainder = (
        stretch * (moment_mean - 2 * q * e2)
        - shift * (slope_mean - 2 * q * e1)
        + stretch**2 * (d22 - 2 * q * spread) / 2
        + shift**2 * (d20 - 2 * q) / 2
        - stretch * shift * (d10 - 2 * q * centre + d21)
    )  # (R, N, P)
    pooled_g = moments[:, 4 * N :]  # (R, P): mean over the coordinates of the resample's E[g_a(z_j)]
    return pooled_g + (q * (spread - e2) + remainder).mean(axis=1)


def _kurtosis_ratio(e1: np.ndarray, e2: np.ndarray, e3: np.ndarray, e4: np.ndarray) -> np.ndarray:
    """m4 / m2² of each coordinate from its raw moments E[z], E[z²], E[z³], E[z⁴] (any matching shapes)."""
    return (e4 - 4 * e1 * e3 + 6 * e1**2 * e2 - 3 * e1**4) / (e2 - e1**2) ** 2


def _bootstrap(key: jax.Array, z: np.ndarray, a: np.ndarray, resamples: int, progress: bool) -> _Replicates:
    """Return the estimators of :func:`predict` on ``resamples`` resamples of the rows of ``z`` (S, N)."""
    S, N = z.shape
    exact = resamples * z.size * a.size <= EXACT_BUDGET
    terms = rule.amplifier_terms(z, a)
    sums = np.concatenate([z, z**2, z**3, z**4, terms.per_sample], axis=1)  # (S, 4N + P)
    spread = np.mean(z**2, axis=0)
    keys = jax.random.split(key, resamples)  # one key per resample: chunking changes nothing
    chunk = max(1, _COUNTS_BUDGET // S)
    kurtosis, amplifier = [], []
    with _bar(resamples, "bootstrap", progress) as bar:
        for start in range(0, resamples, chunk):
            rows = np.asarray(_draw_rows(keys[start : start + chunk], S))
            r = rows.shape[0]
            counts = np.bincount((rows + S * np.arange(r)[:, None]).ravel(), minlength=r * S).reshape(r, S)
            moments = (counts @ sums) / S
            e1, e2, e3, e4 = (moments[:, i * N : (i + 1) * N] for i in range(4))
            m2 = e2 - e1**2
            if np.any(m2 <= 1e-12 * spread):
                raise ValueError(
                    f"samples: a bootstrap resample of the {S} samples has a constant coordinate; "
                    "more samples are needed for the bootstrap"
                )
            kurtosis.append(_kurtosis_ratio(e1, e2, e3, e4).mean(axis=1) - 3.0)
            if exact:
                amplifier.append(np.asarray(_exact_amplifiers(v.float64("z", z), rows, v.float64("a", a))))
            else:
                amplifier.append(_expanded_amplifiers(moments, counts, z, a, terms))
            bar.update(r)
    method = "exact" if exact else "expansion"
    estimate = terms.per_sample.mean(axis=0)
    return _Replicates(terms, estimate, np.concatenate(kurtosis), np.concatenate(amplifier), method)


def _bca(estimate: Any, replicates: np.ndarray, influence: np.ndarray, level: float) -> np.ndarray:
    """Return the (2, ...) BCa interval of ``estimate`` from its (R, ...) resamples and (S, ...) influences.

    Percentiles of the resamples at the levels Φ(z0 + (z0 + z)/(1 - acc (z0 + z))) for z = Φ⁻¹ of the
    interval's two tails: z0 corrects the estimator's bias (Φ⁻¹ of the share of resamples below the
    estimate, kept within half a resample of 0 and 1), the acceleration acc = Σ U³ / (6 (Σ U²)^{3/2}) its
    skewness (U: the samples' influence values).
    """
    below = np.mean(replicates < estimate, axis=0) + 0.5 * np.mean(replicates == estimate, axis=0)
    half = 0.5 / replicates.shape[0]
    z0 = ndtri(np.clip(below, half, 1.0 - half))
    spread = np.sum(influence**2, axis=0)
    acc = np.where(spread > 0, np.sum(influence**3, axis=0) / (6.0 * np.maximum(spread, 1e-300) ** 1.5), 0.0)
    tails = ndtri(np.array([(1.0 - level) / 2, (1.0 + level) / 2])).reshape((2,) + (1,) * np.ndim(z0))
    shifted = z0 + tails
    denominator = 1.0 - acc * shifted
    levels = np.where(denominator > 0, ndtr(z0 + shifted / np.where(denominator > 0, denominator, 1.0)), tails > 0)
    flat = replicates.reshape(replicates.shape[0], -1)
    levels = levels.reshape(2, -1)
    out = np.array([[np.quantile(flat[:, i], levels[k, i]) for i in range(flat.shape[1])] for k in range(2)])
    return out.reshape((2,) + replicates.shape[1:])


def _kurtosis_influence(z: np.ndarray) -> np.ndarray:
    """(S,) jackknife influence of each sample on the pooled excess kurtosis (leave-one-out power sums)."""
    S = z.shape[0]
    e1, e2, e3, e4 = ((np.sum(z**k, axis=0) - z**k) / (S - 1) for k in range(1, 5))  # (S, N) without row s
    leave_one_out = np.mean(_kurtosis_ratio(e1, e2, e3, e4), axis=1)
    return leave_one_out.mean() - leave_one_out


def _amplifier_influence(z: np.ndarray, terms: rule.AmplifierTerms, estimate: np.ndarray) -> np.ndarray:
    """(S, P) first-order influence of each sample on φ(a), its re-standardisation of every coordinate included."""
    spread, centre = np.mean(z**2, axis=0), z.mean(axis=0)
    (d10, d11, _), _ = terms.derivatives
    restandardise = ((z**2 - spread) / (2 * spread)) @ d11 + (z - centre) @ d10  # (S, P)
    return terms.per_sample - estimate - restandardise / z.shape[1]


def predict(
    key: jax.Array,
    samples: Any,
    *,
    shape: int | tuple[int, ...] | None = None,
    resamples: int = 200,
    level: float = 0.95,
    grid: int = 21,
    progress: bool = False,
) -> Prediction:
    r"""Predict from samples whether a single ReLU neuron trained on them localizes (paper Claim 3.2).

    The data are standardised by ``data.empirical.EmpiricalModel`` (every coordinate z-scored; the
    negated samples appended, which leaves every statistic here unchanged). The verdict is the paper's
    sign rule for :math:`N\to\infty`: ``"localizes"`` when the whole ``level`` bootstrap interval of the
    pooled marginal's excess kurtosis is below 0 (sub-Gaussian: φ'''(0) = √(2/π)(3 - E[X⁴]) > 0, φ
    super-linear near 0), ``"does not localize"`` when it is above 0, ``"undecided"`` when it contains 0
    (undecided at this sample size). At finite N the onset needs a margin: the book's chapter *The
    mechanism* finds that NLGP at N = 40 needs an excess kurtosis below about -0.33, so a
    ``"localizes"`` with a kurtosis near 0 is the asymptotic prediction; ``n_inputs`` and
    ``n_samples`` are reported with it.

    Parameters
    ----------
    key : jax.Array
        PRNG key of the bootstrap (the only randomness).
    samples : array-like or EmpiricalModel
        (S, N) samples, one per row, or (S, h, w) patches; or a model already built from them.
        Checked by ``EmpiricalModel.of`` (finite, numeric, enough samples, no constant coordinate).
    shape : int or tuple of int, optional
        The input's shape when the rows are flattened patches (``(h, w)``); default: what the model infers.
    resamples : int
        Bootstrap resamples of the rows, >= 10.
    level : float
        Confidence level of the interval and the bands, in (0, 1).
    grid : int
        Number of points a in (0, 1) where φ is evaluated, >= 3: ``a = i / (grid + 1)``, i = 1..grid.
    progress : bool
        Show a progress bar over the resamples (tqdm, on stderr).

    Returns
    -------
    Prediction
        The statistics, their intervals and bands, the verdict.
    """
    key = v.key("key", key)
    resamples = v.integer("resamples", resamples, minimum=10)
    level = v.in_range("level", level, 0.0, 1.0, low_open=True, high_open=True)
    grid = v.integer("grid", grid, minimum=3)
    if not isinstance(progress, bool):
        raise TypeError(f"progress must be a bool, got {progress!r}")
    model = _model_of(samples, shape)
    z = _originals(model)
    S, N = z.shape
    a = np.arange(1, grid + 1) / (grid + 1)
    reps = _bootstrap(key, z, a, resamples, progress)
    kurtosis = float(model.marginal.excess_kurtosis)
    low, high = (float(q) for q in _bca(kurtosis, reps.kurtosis, _kurtosis_influence(z), level))
    amplifier = reps.amplifier_estimate
    band = _bca(amplifier, reps.amplifier, _amplifier_influence(z, reps.terms, amplifier), level)
    line = rule.gaussian_line(a)
    out = Prediction(
        verdict=rule.sign_rule(low, high),
        n_samples=S,
        n_inputs=N,
        shape=tuple(int(s) for s in model.grid),
        level=level,
        resamples=resamples,
        excess_kurtosis=kurtosis,
        kurtosis_interval=(low, high),
        coordinate_kurtosis=np.asarray(metrics.sample_excess_kurtosis(z, axis=0), dtype=np.float64),
        a=a,
        band_method=reps.method,
        amplifier=amplifier,
        amplifier_band=band,
        deviation=amplifier - line,
        deviation_band=band - line,
        superlinear=band[0] - line > 0,
        sublinear=band[1] - line < 0,
    )
    _check_finite(out)
    return out


def _originals(model: EmpiricalModel) -> np.ndarray:
    """Return the S standardised samples (the model's rows without their appended negatives), (S, N)."""
    z = np.asarray(model.samples, dtype=np.float64)
    return z[: z.shape[0] // 2] if model.symmetrized else z


def _check_finite(result: Prediction) -> None:
    for name, value in result._asdict().items():
        if isinstance(value, (float, np.ndarray, tuple)) and name not in ("shape", "superlinear", "sublinear"):
            if not np.all(np.isfinite(np.asarray(value, dtype=np.float64))):
                raise ValueError(f"{name} came out non-finite: the samples' moments overflow float64")


# -------------------------------------------------------------------------------------------------
# the check by training
# -------------------------------------------------------------------------------------------------
class OwnDataRun(NamedTuple):
    """What :func:`train_on_samples` finds.

    Attributes
    ----------
    w0 : np.ndarray, shape (inits, N)
        The Xavier-normal starts.
    weights : np.ndarray, shape (inits, N)
        The final fields.
    shape : tuple of int
        The input's shape (ring or torus) the fields are judged on.
    against : str
        The class y = 0 the data were trained against: ``"white"`` noise or their Gaussian ``"clone"``.
    geometry : str
        ``"ring"`` (samples cyclically shifted) or ``"line"`` (as they are).
    localized : np.ndarray, shape (inits,)
        Whether each final field is localized (:func:`localization.field_analysis.is_localized`).
    localization_share : np.ndarray, shape (inits,)
        The share of ‖w‖² in the best quarter window (:func:`localization.field_analysis.localization_share`).
    lr, batch, steps : float, int, int
        The SGD settings; the run's time is ``steps * lr``.
    """

    w0: np.ndarray
    weights: np.ndarray
    shape: tuple[int, ...]
    against: str
    geometry: str
    localized: np.ndarray
    localization_share: np.ndarray
    lr: float
    batch: int
    steps: int

    @property
    def time(self) -> float:
        """The training time steps × lr (the flow's time axis)."""
        return self.steps * self.lr

    @property
    def localized_fraction(self) -> float:
        """The fraction of the final fields that are localized."""
        return float(np.mean(self.localized))

    def agrees_with(self, prediction: Prediction) -> bool | None:
        """Whether the run agrees with ``prediction`` (None when the prediction is ``"undecided"``).

        Agreement: ``"localizes"`` and most (more than half) of the fields localized, or
        ``"does not localize"`` and at most one localized.
        """
        if not isinstance(prediction, Prediction):
            raise TypeError(f"prediction must be a Prediction (from predict), got {type(prediction).__name__}")
        count = int(np.sum(self.localized))
        if prediction.verdict == rule.LOCALIZES:
            return count > self.localized.size / 2
        if prediction.verdict == rule.DOES_NOT_LOCALIZE:
            return count <= 1
        return None

    def as_dict(self) -> dict[str, Any]:
        """Return the run's summary as plain Python values (JSON-ready): no weights, the judgements."""
        return {
            "inits": int(self.localized.size),
            "against": self.against,
            "geometry": self.geometry,
            "lr": self.lr,
            "batch": self.batch,
            "steps": self.steps,
            "time": self.time,
            "localized": self.localized.tolist(),
            "localization_share": self.localization_share.tolist(),
            "localized_fraction": self.localized_fraction,
        }


def train_on_samples(
    key: jax.Array,
    model: EmpiricalModel,
    *,
    against: str = "white",
    geometry: str = "ring",
    inits: int = 8,
    steps: int = STEPS,
    lr: float = LR,
    batch: int = BATCH,
    init_scale: float = INIT_SCALE,
    progress: bool = False,
) -> OwnDataRun:
    r"""Train the paper's single ReLU neuron by online SGD on the data (y = 1) against a Gaussian class (y = 0).

    ``inits`` Xavier-normal starts (variance × ``init_scale``) train on one shared data stream
    (``train.train_online``, float32) in a few segments (for the progress bar; segment i draws its
    batches from ``fold_in(data key, i)``); the final fields are judged by the book's definition
    (:func:`localization.field_analysis.is_localized`).

    The class y = 0 (``against``):

    * ``"white"`` (default): white Gaussian noise, N(0, I) (``data.Gaussian(xi=WHITE_XI)``, whose
      covariance is the identity to 1e-43) — the paper's length-scale task in the limit of a class 0
      with no correlations, where the paper's rule applies: the class covariances differ, and the
      linear part of the flow (the book's chapter *The mechanism*) pulls towards spread fields unless
      φ is super-linear where the weights are.
    * ``"clone"``: the data's Gaussian clone (``data.empirical.CloneTask``), same covariance. There
      the linear part of the flow cancels, and a φ super-linear anywhere can localize: measured here,
      Kur(5) (excess kurtosis +1.29, φ super-linear above a ≈ 0.67) localizes in 7-8 of 8 runs on its
      clone task (SGD and the effective flow alike) but in none against white noise. The sign rule
      is therefore *not* the clone task's prediction.

    The geometry (``geometry``): the book's definition of localized uses periodic windows, and the
    theory assumes a law invariant under the ring's translations (S2). ``"ring"`` (default) trains on
    :class:`localization.data.ring.RingModel` of the data (every sample cyclically shifted by a
    uniform random shift: S2 exact, the marginal unchanged); ``"line"`` trains on the samples as they
    are, where a field whose weight sits at both ends of a row counts as one bump across the seam (a
    row's two ends are not neighbours; :mod:`localization.experiments.real_images` measures such edge
    "bumps" on raw rows of a photograph).

    Defaults: lr 0.1, batch 2000 and 3000 steps, time 300, three times the paper's Fig. 3 run (lr
    0.05, batch 10,000, 2000 steps, time 100) at a fifth of its batch. Measured at N = 40 on 20,000
    samples: NLGP(ξ=3, g=10) and NLGP(ξ=3, g=1) end with 8 of 8 fields localized from time 100 on,
    Gaussian(ξ=3) and Kur(ξ=3, k=3.5 or 5) with none, in 2-5 s on 2 shared CPU cores for 8 starts.

    Parameters
    ----------
    key : jax.Array
        PRNG key of the starts and the data stream.
    model : EmpiricalModel
        The data (``data.empirical.EmpiricalModel.of(samples)``).
    against : str
        The class y = 0: ``"white"`` or ``"clone"`` (see above).
    geometry : str
        ``"ring"`` (the samples cyclically shifted, default) or ``"line"`` (as they are); see above.
    inits : int
        Number of starts, >= 1.
    steps, lr, batch : int, float, int
        SGD steps (>= 1), learning rate (> 0) and batch (>= 1).
    init_scale : float
        Variance multiplier of the starts, > 0.
    progress : bool
        Show a progress bar over the segments.

    Returns
    -------
    OwnDataRun
        The starts, final fields and their judgement by the book's definition of localized.

    Raises
    ------
    ValueError
        Also when the run diverges (a non-finite field: lower ``lr``) or a field ends at 0.
    """
    key = v.key("key", key)
    if not isinstance(model, EmpiricalModel):
        raise TypeError(f"model must be a data.empirical.EmpiricalModel, got {type(model).__name__}")
    if against not in AGAINST:
        raise ValueError(f"against must be one of {AGAINST}, got {against!r}")
    if geometry not in GEOMETRIES:
        raise ValueError(f"geometry must be one of {GEOMETRIES}, got {geometry!r}")
    inits = v.integer("inits", inits, minimum=1)
    steps = v.integer("steps", steps, minimum=1)
    lr = v.positive("lr", lr)
    batch = v.integer("batch", batch, minimum=1)
    init_scale = v.positive("init_scale", init_scale)
    if not isinstance(progress, bool):
        raise TypeError(f"progress must be a bool, got {progress!r}")
    shape = tuple(int(s) for s in model.grid)
    n = shape if len(shape) > 1 else shape[0]
    data1 = RingModel(model) if geometry == "ring" else model
    task = CloneTask(data1) if against == "clone" else data.LengthscaleTask(data.Gaussian(xi=WHITE_XI), data1)
    init_key, data_key = jax.random.split(key)
    w0 = initialisation.init_weights(init_key, n, init_scale, num=inits, dtype=jnp.float32)
    w = w0
    segments = [len(s) for s in np.array_split(np.arange(steps), min(_SEGMENTS, steps))]
    with _bar(steps, "training", progress) as bar:
        for i, part in enumerate(segments):
            run = train.train_online(
                jax.random.fold_in(data_key, i), task, w, lr=lr, batch=batch, steps=part, checkpoints=[part], n=n
            )
            w = run.weights[:, -1]
            if not bool(jnp.all(jnp.isfinite(w))):
                raise ValueError(f"training diverged (non-finite fields) at lr = {lr}: use a smaller lr")
            bar.update(part)
    final = np.asarray(w, dtype=np.float64)
    if np.any(np.sum(final**2, axis=-1) == 0):
        raise ValueError("a field ended at exactly 0; nothing to judge")
    return OwnDataRun(
        w0=np.asarray(w0, dtype=np.float64),
        weights=final,
        shape=shape,
        against=against,
        geometry=geometry,
        localized=np.asarray(field_analysis.is_localized(final, n)),
        localization_share=np.asarray(field_analysis.localization_share(final, n), dtype=np.float64),
        lr=lr,
        batch=batch,
        steps=steps,
    )
