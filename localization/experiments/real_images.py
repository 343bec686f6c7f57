r"""What the theory predicts on real photographs, and whether it holds (the two scikit-learn photographs).

A data set is a (photograph, preprocessing, shape) of :mod:`localization.data.images`: rows of N
pixels or (h, w) patches of ``china.jpg`` or ``flower.jpg``, raw, centred, whitened or
centre-surround filtered, z-scored per coordinate and sign-symmetrised by
:class:`~localization.data.empirical.EmpiricalModel`. :class:`RealImageSettings` names one, with the
task, the geometry and the run settings; :func:`build_task` draws it.

**Tasks** (class y = 1 is always the photograph's rows or patches):

``"lengthscale"``
    the paper's task (Eq. (1)) made of one photograph: class 0 holds every second pixel of rows of 2N
    pixels (patches of 2h x 2w), so both classes have the same pixel marginal and class 1 the longer
    correlations. The literal analogue of the paper's NLGP(ξ₀) vs NLGP(ξ₁).
``"clone"``
    the rows against their Gaussian clone (:class:`~localization.data.empirical.CloneTask`):
    Σ₀ = Σ₁, so the linear part of the flow (paper Eq. (5)) selects nothing and φ alone decides.
``"white"``
    the rows against white Gaussian noise, Σ₀ = I (the default of
    :func:`localization.experiments.own_data.train_on_samples`).

**Geometries.** The theory assumes translation invariance on a periodic index set (S2); rows cut
from a photograph are neither periodic nor exactly stationary. ``"ring"`` makes S2 exact:
every sample is cyclically shifted by a uniform random shift of its ring (torus), which
:class:`localization.data.ring.RingModel` does at sampling time; its covariance is the shift
average of the data's (:func:`~localization.data.ring.ring_average`, circulant), its marginal
unchanged. ``"line"`` keeps the rows as they are.

**What is computed.**

* :func:`reference_state` — the finite-N prediction. The linear part of Eq. (5) selects the
  generalized eigenvector of (Σ₀, Σ₁) of least :math:`r=\lambda_0/\lambda_1` (the constant on
  the ring when it wins: the state of the book's chapter *The mechanism*); the fixed point of
  Eq. (5) with the exact φ next to it is found by Newton's method and the eigenvalues of the
  Jacobian there decide: a growth rate above ``1/flow_time`` means the non-localized state is left
  within the run. When that state is the constant on a ring or torus, α, the elasticity ρ and the
  threshold of :func:`localization.theory.constant_mode_stability` are also returned.
* :func:`run_flow` — Eq. (5) integrated from small Xavier-normal starts (tabulated exact φ).
* :func:`run_sgd` — online SGD of the single ReLU neuron (float32) from the same starts.
* :func:`field_discrepancy` — Eq. (5)'s right-hand side against the exact expected gradient of the
  drawn data at given weights (the data's law is finite, so the expectation is a finite sum), and
  :func:`run_exact_flow`, gradient descent on that exact expected loss (SGD without noise).

Every field is judged by the book's one definition,
:func:`localization.field_analysis.is_localized` (periodic windows); on the line
:func:`open_share`, the same share with windows that do not wrap around, tells a bump from mass
split between the two ends of a row.

Randomness enters through explicit keys only. Time is steps x lr throughout.
"""

from __future__ import annotations

import dataclasses
import functools
import math
from typing import Any, NamedTuple

import jax
import jax.numpy as jnp
import numpy as np

from localization import data, field_analysis, initialisation, theory, train
from localization import validation as v
from localization.data import images
from localization.data.base import DataModel
from localization.data.empirical import MIN_SAMPLES, CloneTask, EmpiricalModel
from localization.data.ring import RingModel, torus_eigenvalues

__all__ = [
    "TASKS",
    "GEOMETRIES",
    "WHITE_XI",
    "RANK_TOLERANCE",
    "TIE_TOLERANCE",
    "RealImageSettings",
    "image_samples",
    "RealImageTask",
    "build_task",
    "ConstantState",
    "ReferenceState",
    "reference_state",
    "FlowRun",
    "run_flow",
    "SGDRun",
    "run_sgd",
    "FieldDiscrepancy",
    "field_discrepancy",
    "run_exact_flow",
    "open_share",
]

#: The class y = 0 of the task (module docstring).
TASKS = ("lengthscale", "clone", "white")
#: How the rows (patches) are indexed: a ring (torus) by random cyclic shifts, or as cut ("line").
GEOMETRIES = ("ring", "line")
#: Length-scale of ``data.Gaussian`` used as white noise: its covariance is the identity to 1e-43.
WHITE_XI = 0.1
#: Eigenvalues of Σ₁ below this fraction of the largest are treated as 0 (centred rows have an exact
#: null direction, the constant; whitened ones in addition the floored directions).
RANK_TOLERANCE = 1e-8
#: Generalized eigenvalues r within this (relative) distance of the least are tied (exact ties: the
#: clone task, where r = 1 for every direction, and the cos/sin pairs of one frequency on a ring).
TIE_TOLERANCE = 1e-8


# --------------------------------------------------------------------------------------------
# settings
# --------------------------------------------------------------------------------------------
@dataclasses.dataclass(frozen=True)
class RealImageSettings:
    """One real-image data set, its task and geometry, and the settings of the flow and SGD runs.

    Attributes
    ----------
    image : str
        One of :data:`localization.data.images.IMAGE_NAMES`.
    preprocessing : str
        One of :data:`localization.data.images.PREPROCESSINGS`.
    shape : tuple of int
        ``(N,)`` for rows of N pixels, ``(h, w)`` for patches; every axis >= 4 (a localization window
        of at least one site); an int N is stored as ``(N,)``.
    task : str
        One of :data:`TASKS`; ``"lengthscale"`` is not defined for ``"whitened"`` data (whitening
        removes the correlations that tell its classes apart).
    geometry : str
        One of :data:`GEOMETRIES`.
    samples : int
        Rows (patches) drawn per class, >= :data:`localization.data.empirical.MIN_SAMPLES`.
    inits : int
        Starts of the flow and SGD runs, >= 1.
    init_scale : float
        Variance multiplier of the Xavier-normal starts (> 0; 1e-3, the single neuron's reference).
    max_lr : float
        The largest step (> 0). The step is ``min(max_lr, 1 / λ_max)``, λ_max the largest eigenvalue of
        (Σ₀ + Σ₁)/2, the fastest linear rate of Eq. (5): forward Euler then decays every linear mode
        without overshoot (raw rows have λ_max ≈ 34 at N = 40).
    flow_time, sgd_time : float
        Durations (steps x lr, > 0) of the flow and SGD runs.
    batch : int
        SGD examples per step, >= 1.
    checkpoints : int
        Evenly spaced checkpoints of both runs including t = 0, >= 3.
    settle_tolerance : float
        In (0, 1). A flow run is settled when every field moved by at most this fraction of its
        norm over the second half of the run. (An SGD run is settled when its count of localized
        fields is the same at every checkpoint of the second half: SGD fields fluctuate for ever,
        their judgement must not.)
    """

    image: str = "china.jpg"
    preprocessing: str = "raw"
    shape: tuple[int, ...] = (40,)
    task: str = "lengthscale"
    geometry: str = "ring"
    samples: int = 20_000
    inits: int = 8
    init_scale: float = 1e-3
    max_lr: float = 0.05
    flow_time: float = 2000.0
    sgd_time: float = 500.0
    batch: int = 1000
    checkpoints: int = 11
    settle_tolerance: float = 0.05

    def __post_init__(self) -> None:
        """Validate every field (naming it, its value and the valid range) and normalise ``shape``."""
        put = functools.partial(object.__setattr__, self)
        put("shape", images.check_data_set(self.image, self.preprocessing, self.shape))
        if self.task not in TASKS:
            raise ValueError(f"task must be one of {TASKS}, got {self.task!r}")
        if self.task == "lengthscale" and self.preprocessing == "whitened":
            raise ValueError(
                "task='lengthscale' is not defined for preprocessing='whitened': whitening removes the "
                "correlations whose length tells the two classes apart; use task='clone' or 'white'"
            )
        if self.geometry not in GEOMETRIES:
            raise ValueError(f"geometry must be one of {GEOMETRIES}, got {self.geometry!r}")
        put("samples", v.integer("samples", self.samples, MIN_SAMPLES))
        put("inits", v.integer("inits", self.inits, 1))
        put("init_scale", v.positive("init_scale", self.init_scale))
        put("max_lr", v.positive("max_lr", self.max_lr))
        put("flow_time", v.positive("flow_time", self.flow_time))
        put("sgd_time", v.positive("sgd_time", self.sgd_time))
        put("batch", v.integer("batch", self.batch, 1))
        put("checkpoints", v.integer("checkpoints", self.checkpoints, 3))
        tolerance = v.in_range("settle_tolerance", self.settle_tolerance, 0.0, 1.0, low_open=True, high_open=True)
        put("settle_tolerance", tolerance)

    def replace(self, **changes: Any) -> RealImageSettings:
        """Return a copy with some fields changed (validated again)."""
        return dataclasses.replace(self, **changes)

    @property
    def n(self) -> int | tuple[int, int]:
        """The input size as the library takes it: N for rows, (h, w) for patches."""
        return self.shape[0] if len(self.shape) == 1 else self.shape

    @property
    def N(self) -> int:
        """The number of sites, prod(shape)."""
        return math.prod(self.shape)

    @property
    def label(self) -> str:
        """A short name, e.g. ``"china.jpg raw (40,) lengthscale ring"``."""
        return f"{self.image} {self.preprocessing} {self.shape} {self.task} {self.geometry}"


# --------------------------------------------------------------------------------------------
# data and tasks
# --------------------------------------------------------------------------------------------
def image_samples(
    key: jax.Array, image: str, preprocessing: str, shape: tuple[int, ...], num: int, *, stride: int = 1
) -> np.ndarray:
    """Return ``num`` rows (patches) of a photograph with every ``stride``-th pixel, preprocessed.

    A row of ``stride * N`` adjacent pixels (a patch of ``stride * h`` x ``stride * w``) keeps every
    ``stride``-th pixel, so ``stride = 2`` spans twice the distance with the same pixel marginal. The
    centre-surround filter acts on the image before the cut; centring and whitening act on the kept
    pixels (as :func:`localization.data.images.image_rows` does for ``stride = 1``).

    Parameters
    ----------
    key : jax.Array
        PRNG key of the positions.
    image, preprocessing : str
        As in :mod:`localization.data.images`.
    shape : tuple of int
        ``(N,)`` or ``(h, w)``.
    num : int
        Number of rows (patches), >= 2.
    stride : int
        1 or more.

    Returns
    -------
    np.ndarray
        (num, N) or (num, h, w) float64.
    """
    key = v.key("key", key)
    grid = v.shape("shape", shape)
    if len(grid) > 2:
        raise ValueError(f"shape must be (N,) or (h, w), got {shape!r}")
    stride = v.integer("stride", stride, 1)
    num = v.integer("num", num, 2)
    if preprocessing not in images.PREPROCESSINGS:
        raise ValueError(f"preprocessing must be one of {images.PREPROCESSINGS}, got {preprocessing!r}")
    cut = "centre_surround" if preprocessing == "centre_surround" else "raw"
    if len(grid) == 1:
        x = images.image_rows(key, image, stride * grid[0], num, preprocessing=cut)[:, ::stride]
    else:
        x = images.image_patches(key, image, (stride * grid[0], stride * grid[1]), num, preprocessing=cut)
        x = x[:, ::stride, ::stride]
    if preprocessing in ("centred", "whitened"):
        flat = x.reshape(num, -1)
        flat = flat - flat.mean(axis=1, keepdims=True)
        if preprocessing == "whitened":
            centred = flat - flat.mean(axis=0)
            lam, vec = np.linalg.eigh(centred.T @ centred / num)
            scale = 1.0 / np.sqrt(np.maximum(lam, images.WHITENING_FLOOR * lam[-1]))
            flat = centred @ ((vec * scale) @ vec.T)
        x = flat.reshape(x.shape)
    return np.ascontiguousarray(x)


class RealImageTask(NamedTuple):
    """A drawn real-image task (:func:`build_task`).

    Attributes
    ----------
    settings : RealImageSettings
    task : object
        What :func:`localization.train.train_online` samples: a ``LengthscaleTask`` or a ``CloneTask``.
    model1 : DataModel
        Class y = 1: the photograph's rows (a :class:`~localization.data.ring.RingModel` on the ring).
    cov0, cov1 : np.ndarray
        (N, N) float64 class covariances (exact for the drawn law; ``cov1`` with unit diagonal).
    excess_kurtosis : float
        Of the pooled standardised class-1 marginal, the number of the paper's sign rule.
    neighbour_correlation : tuple of float
        Mean correlation of neighbouring sites along the last axis, (class 0, class 1).
    lr : float
        The step of the flow and SGD runs (``RealImageSettings.max_lr``).
    amplifier : localization.theory.Amplifier
        φ of Eq. (6) of the pooled class-1 marginal (exact, differentiable).
    """

    settings: RealImageSettings
    task: Any
    model1: DataModel
    cov0: np.ndarray
    cov1: np.ndarray
    excess_kurtosis: float
    neighbour_correlation: tuple[float, float]
    lr: float
    amplifier: Any

    @property
    def marginal(self):
        """The pooled class-1 marginal (the law φ of Eq. (6) is computed from)."""
        return self.model1.marginal


def _mean_neighbour(cov: np.ndarray, grid: tuple[int, ...], periodic: bool) -> float:
    sites = np.arange(math.prod(grid)).reshape(grid)
    right = np.roll(sites, -1, axis=-1) if periodic else sites[..., 1:]
    left = sites if periodic else sites[..., :-1]
    return float(np.mean(cov[left.ravel(), right.ravel()]))


def build_task(key: jax.Array, settings: RealImageSettings) -> RealImageTask:
    """Draw the samples of ``settings`` and build its task, covariances and step.

    Class 1 draws its positions from ``fold_in(key, 1)``, class 0 (``"lengthscale"``) from
    ``fold_in(key, 0)``: the two classes are different rows of the photograph.

    Parameters
    ----------
    key : jax.Array
        PRNG key of the positions.
    settings : RealImageSettings

    Returns
    -------
    RealImageTask
    """
    key = v.key("key", key)
    if not isinstance(settings, RealImageSettings):
        raise TypeError(f"settings must be a RealImageSettings, got {type(settings).__name__}")
    grid, n = settings.shape, settings.n
    ring = settings.geometry == "ring"

    def model_of(stride: int, k: jax.Array) -> DataModel:
        x = image_samples(k, settings.image, settings.preprocessing, grid, settings.samples, stride=stride)
        label = f"{settings.image} {settings.preprocessing} stride {stride}"
        m = EmpiricalModel.of(x, grid, name=label)
        return RingModel(m) if ring else m

    model1 = model_of(1, jax.random.fold_in(key, 1))
    if settings.task == "clone":
        task = CloneTask(model1)
        model0 = task.model0
    elif settings.task == "white":
        model0 = data.Gaussian(xi=WHITE_XI)
        task = data.LengthscaleTask(model0, model1)
    else:
        model0 = model_of(2, jax.random.fold_in(key, 0))
        task = data.LengthscaleTask(model0, model1)
    cov0 = np.array(model0.covariance(n), dtype=np.float64)
    cov1 = np.array(model1.covariance(n), dtype=np.float64)
    rate = float(np.linalg.eigvalsh(0.5 * (cov0 + cov1))[-1])
    lr = min(settings.max_lr, 1.0 / rate)
    return RealImageTask(
        settings=settings,
        task=task,
        model1=model1,
        cov0=cov0,
        cov1=cov1,
        excess_kurtosis=float(model1.marginal.excess_kurtosis),
        neighbour_correlation=(_mean_neighbour(cov0, grid, ring), _mean_neighbour(cov1, grid, ring)),
        lr=lr,
        amplifier=theory.amplifier_of(model1.marginal),
    )


def _check_built(built: Any) -> RealImageTask:
    if not isinstance(built, RealImageTask):
        raise TypeError(f"built must be a RealImageTask (from build_task), got {type(built).__name__}")
    return built


# --------------------------------------------------------------------------------------------
# the finite-N prediction
# --------------------------------------------------------------------------------------------
class ConstantState(NamedTuple):
    r"""The constant state of a ring or torus task (the book's chapter *The mechanism*).

    ``alpha`` = :math:`\sqrt{\lambda_1(0)/N}`, every site's argument of φ; ``elasticity``
    :math:`\rho=\alpha\varphi'(\alpha)/\varphi(\alpha)`; ``threshold`` =
    :math:`\min_{k\ne0}(1+r(k))/(1+r(0))`: the constant is unstable iff ρ > threshold; ``gain``
    :math:`\varphi(\alpha)/\alpha`.
    """

    alpha: float
    elasticity: float
    threshold: float
    gain: float


class ReferenceState(NamedTuple):
    r"""The non-localized state the linear part of Eq. (5) selects, and its stability (:func:`reference_state`).

    ``ratio`` :math:`r=\lambda_0/\lambda_1` of the selected direction (least over the range of Σ₁);
    ``tied`` the directions sharing it (N or N - 1 for the clone task, whose linear part is
    degenerate; 2 for a cos/sin pair on a ring); ``constant`` whether the direction is the constant
    (cosine above 1 - 1e-6); ``start`` (N,) the direction scaled to the linear flow's fixed point;
    ``converged`` whether Newton's method (:func:`localization.theory.effective_fixed_point`, exact φ)
    found a fixed point from there; ``weights`` (N,) that fixed point, ``share`` its localization
    share, ``eigenvalues`` (N,) the Jacobian's there by decreasing real part and ``top_rate`` the
    largest real part (None when not converged); ``verdict`` ``"unstable"`` (top_rate >
    1/flow_time: left within the run), ``"stable"`` (< -1/flow_time), ``"marginal"`` (slower than the
    run) or ``"no fixed point"``; ``constant_state`` α, ρ and the threshold (:class:`ConstantState`)
    when the state is the constant on a ring or torus, else None.
    """

    ratio: float
    tied: int
    constant: bool
    start: np.ndarray
    converged: bool
    weights: np.ndarray | None
    share: float | None
    eigenvalues: np.ndarray | None
    top_rate: float | None
    verdict: str
    constant_state: ConstantState | None


def _selected_direction(cov0: np.ndarray, cov1: np.ndarray) -> tuple[np.ndarray, float, int]:
    """Return the generalized eigenvector of least r on Σ₁'s range (ties: the largest Σ₁ Rayleigh quotient)."""
    lam, vec = np.linalg.eigh(cov1)
    keep = lam > RANK_TOLERANCE * lam[-1]
    basis = vec[:, keep] / np.sqrt(lam[keep])  # B with Bᵀ Σ₁ B = I
    ratios, coords = np.linalg.eigh(basis.T @ cov0 @ basis)
    least = ratios[0]
    tied = ratios <= least + TIE_TOLERANCE * max(1.0, abs(least))
    directions = basis @ coords[:, tied]  # (N, t), Σ₁-orthonormal
    # among the tied directions, the one that grows fastest early on (largest wᵀΣ₁w / wᵀw)
    q, _ = np.linalg.qr(directions)
    top = np.linalg.eigh(q.T @ cov1 @ q)[1][:, -1]
    w = q @ top
    return w, float(least), int(tied.sum())


def _constant_state(built: RealImageTask) -> ConstantState:
    grid = built.settings.shape
    lam0 = torus_eigenvalues(built.cov0, grid, atol=1e-6).ravel()
    lam1 = torus_eigenvalues(built.cov1, grid, atol=1e-6).ravel()
    alpha = math.sqrt(lam1[0] / built.settings.N)
    phi = built.amplifier
    value, slope = theory.mechanism.amplifier_value_and_slope(phi, alpha)
    threshold, _ = theory.mechanism.mode_threshold(lam0, lam1)
    return ConstantState(alpha, alpha * slope / value, threshold, value / alpha)


def reference_state(built: RealImageTask) -> ReferenceState:
    r"""Return the non-localized state the linear part of Eq. (5) selects and the growth rates there.

    The linear flow (φ(a) = c a) has a fixed point on each generalized eigenvector of
    :math:`\Sigma_0w=r\,\Sigma_1w` (restricted to the range of Σ₁), with :math:`\sqrt{w^\top\Sigma_1w}=c/(1+r)`,
    and the stable one has the least r (the book's chapter *The mechanism*: the constant, for the
    paper's tasks). Ties (the clone task, where r = 1 in every direction) go to the direction that
    grows fastest from a small start, the top eigenvector of Σ₁ among the tied ones. From there Newton's
    method finds the fixed point of Eq. (5) with the class-1 φ, and the Jacobian's eigenvalues say
    whether φ destabilises it: the finite-N form of the paper's prediction, for any covariances.

    Parameters
    ----------
    built : RealImageTask

    Returns
    -------
    ReferenceState
    """
    built = _check_built(built)
    settings = built.settings
    phi = built.amplifier
    w, ratio, tied = _selected_direction(built.cov0, built.cov1)
    N = settings.N
    constant = abs(float(np.sum(w))) / (math.sqrt(N) * float(np.linalg.norm(w))) > 1 - 1e-6
    if float(np.sum(w)) < 0 or (abs(float(np.sum(w))) < 1e-12 and w[np.argmax(np.abs(w))] < 0):
        w = -w
    slope = theory.amplifier_derivatives_at_zero(built.marginal).first
    start = w * (slope / (1.0 + ratio)) / math.sqrt(float(w @ built.cov1 @ w))
    constant_state = _constant_state(built) if constant and settings.geometry == "ring" else None
    try:
        fixed, _ = theory.effective_fixed_point(start, phi, built.cov0, built.cov1, tol=1e-10, max_iter=100)
    except ValueError:
        return ReferenceState(
            ratio, tied, constant, start, False, None, None, None, None, "no fixed point", constant_state
        )
    jac = theory.effective_jacobian(fixed, phi, built.cov0, built.cov1)
    eig = np.linalg.eigvals(jac)
    eig = eig[np.argsort(-eig.real)]
    top = float(eig[0].real)
    margin = 1.0 / settings.flow_time
    verdict = "unstable" if top > margin else "stable" if top < -margin else "marginal"
    share = float(field_analysis.localization_share(fixed, settings.n))
    return ReferenceState(ratio, tied, constant, start, True, fixed, share, eig, top, verdict, constant_state)


# --------------------------------------------------------------------------------------------
# runs
# --------------------------------------------------------------------------------------------
def open_share(w: Any, shape: int | tuple[int, ...]) -> np.ndarray:
    """Return the largest share of ‖w‖² in one localization window that does not wrap around.

    The window is :func:`localization.field_analysis.localization_window`'s (a quarter of the sites);
    unlike :func:`localization.field_analysis.localization_share` it never joins the two ends of a row
    (or the opposite edges of a patch): on the line geometry, mass split between the ends is no bump.

    Parameters
    ----------
    w : array_like
        (..., N) finite, non-zero fields.
    shape : int or tuple of int
        (N,) or (h, w).

    Returns
    -------
    np.ndarray
        (...) float64 shares in (0, 1].
    """
    grid = v.shape("shape", shape, minimum=4)
    side = field_analysis.localization_window(grid)
    w = v.finite_real_array("w", w)
    if w.ndim < 1 or w.shape[-1] != math.prod(grid):
        raise ValueError(f"w must have last axis {math.prod(grid)} for shape {grid}, got {w.shape}")
    power = w**2
    total = power.sum(axis=-1)
    if np.any(total == 0):
        raise ValueError("w must be non-zero")
    p = power.reshape(*w.shape[:-1], *grid)
    for axis in range(len(grid)):
        ax = p.ndim - len(grid) + axis
        c = np.cumsum(p, axis=ax)
        zero = np.zeros_like(np.take(c, [0], axis=ax))
        c = np.concatenate([zero, c], axis=ax)
        length = grid[axis]
        p = np.take(c, np.arange(side, length + 1), axis=ax) - np.take(c, np.arange(0, length + 1 - side), axis=ax)
    return p.reshape(*w.shape[:-1], -1).max(axis=-1) / total


def _starts(key: jax.Array, settings: RealImageSettings) -> np.ndarray:
    w0 = initialisation.init_weights(key, settings.n, settings.init_scale, num=settings.inits, dtype=jnp.float64)
    return np.asarray(w0, dtype=np.float64)


class FlowRun(NamedTuple):
    """An integration of Eq. (5) (:func:`run_flow`) or of the exact expected gradient (:func:`run_exact_flow`).

    ``times`` (C,) checkpoint times; ``weights`` (inits, C, N); ``share`` (inits, C) localization
    shares (periodic windows, the book's definition); ``open_share`` (inits,) the final share in
    windows that do not wrap (:func:`open_share`); ``localized`` (inits,) the final fields judged by
    :func:`localization.field_analysis.is_localized`; ``change`` (inits,) ‖w(T) - w(T/2)‖ / ‖w(T)‖
    (T/2: the nearest checkpoint); ``settled``: every change at most ``settle_tolerance``; ``lr``,
    ``steps``.
    """

    times: np.ndarray
    weights: np.ndarray
    share: np.ndarray
    open_share: np.ndarray
    localized: np.ndarray
    change: np.ndarray
    settled: bool
    lr: float
    steps: int

    @property
    def count(self) -> int:
        """The number of localized final fields."""
        return int(np.sum(self.localized))


def run_flow(key: jax.Array, built: RealImageTask, *, table: int = 4097) -> FlowRun:
    """Integrate Eq. (5) with the class-1 φ (tabulated) from the starts of ``fold_in(key, 0)``, as :func:`run_sgd`.

    Parameters
    ----------
    key : jax.Array
        PRNG key.
    built : RealImageTask
    table : int
        Points of the φ table (:func:`localization.theory.tabulate_amplifier`; odd, >= 3).

    Returns
    -------
    FlowRun
    """
    key = v.key("key", key)
    built = _check_built(built)
    settings = built.settings
    w0 = _starts(jax.random.fold_in(key, 0), settings)
    phi = theory.tabulate_amplifier(built.amplifier, table)
    steps = max(1, round(settings.flow_time / built.lr))
    run = theory.integrate_effective(
        w0, phi, built.cov0, built.cov1, lr=built.lr, steps=steps, checkpoints=settings.checkpoints
    )
    return _flow_run(np.asarray(run.times), np.asarray(run.weights, dtype=np.float64), settings, built.lr, steps)


def _half(times: np.ndarray) -> int:
    return int(np.argmin(np.abs(times - 0.5 * times[-1])))


def _flow_run(times, weights, settings, lr, steps) -> FlowRun:
    if not np.all(np.isfinite(weights)):
        raise ValueError("the flow diverged (non-finite weights); lower max_lr")
    n = settings.n
    share = np.asarray(field_analysis.localization_share(weights, n), dtype=np.float64)
    final = weights[:, -1]
    mid = weights[:, _half(times)]
    change = np.linalg.norm(final - mid, axis=-1) / np.linalg.norm(final, axis=-1)
    return FlowRun(
        times=times,
        weights=weights,
        share=share,
        open_share=open_share(final, settings.shape),
        localized=np.asarray(field_analysis.is_localized(final, n)),
        change=change,
        settled=bool(np.all(change <= settings.settle_tolerance)),
        lr=lr,
        steps=steps,
    )


class SGDRun(NamedTuple):
    """An online-SGD run of the single ReLU neuron (:func:`run_sgd`).

    ``times``, ``weights`` (float64 copies of the float32 run), ``share``, ``open_share`` and
    ``localized`` as in :class:`FlowRun`; ``counts`` (C,) localized fields at each checkpoint;
    ``mean_localized`` (inits,) the mean of each field over the checkpoints of the second half,
    judged (the noise averages out of it); ``share_spread`` the largest change of a share over the
    second half (the noise: tens of percent on raw pixels at batch 1000); ``settled``: ``counts``
    constant over the second half, the judgement no longer changes; ``lr``, ``batch``, ``steps``.
    """

    times: np.ndarray
    weights: np.ndarray
    share: np.ndarray
    open_share: np.ndarray
    localized: np.ndarray
    counts: np.ndarray
    mean_localized: np.ndarray
    share_spread: float
    settled: bool
    lr: float
    batch: int
    steps: int

    @property
    def count(self) -> int:
        """The number of localized final fields."""
        return int(np.sum(self.localized))


def run_sgd(key: jax.Array, built: RealImageTask) -> SGDRun:
    """Train the single ReLU neuron by online SGD (float32) from the starts of ``fold_in(key, 0)``.

    The batches come from ``fold_in(key, 1)`` (one stream shared by the starts), the step is
    ``built.lr``, the duration ``settings.sgd_time``.

    Parameters
    ----------
    key : jax.Array
        PRNG key.
    built : RealImageTask

    Returns
    -------
    SGDRun
    """
    key = v.key("key", key)
    built = _check_built(built)
    settings = built.settings
    w0 = _starts(jax.random.fold_in(key, 0), settings).astype(np.float32)
    steps = max(1, round(settings.sgd_time / built.lr))
    run = train.train_online(
        jax.random.fold_in(key, 1),
        built.task,
        jnp.asarray(w0),
        lr=built.lr,
        batch=settings.batch,
        steps=steps,
        checkpoints=settings.checkpoints,
        n=settings.n,
    )
    weights = np.asarray(run.weights, dtype=np.float64)
    if not np.all(np.isfinite(weights)):
        raise ValueError("SGD diverged (non-finite weights); lower max_lr")
    times = np.asarray(run.times, dtype=np.float64)
    n = settings.n
    share = np.asarray(field_analysis.localization_share(weights, n), dtype=np.float64)
    localized_at = np.asarray(field_analysis.is_localized(weights, n))
    counts = localized_at.sum(axis=0)
    half = _half(times)
    tail = slice(half, None)
    mean_field = weights[:, tail].mean(axis=1)
    spread = np.abs(share[:, tail] - share[:, half : half + 1]).max()
    return SGDRun(
        times=times,
        weights=weights,
        share=share,
        open_share=open_share(weights[:, -1], settings.shape),
        localized=localized_at[:, -1],
        counts=counts,
        mean_localized=np.asarray(field_analysis.is_localized(mean_field, n)),
        share_spread=float(spread),
        settled=bool(np.all(counts[tail] == counts[-1])),
        lr=built.lr,
        batch=settings.batch,
        steps=steps,
    )


# --------------------------------------------------------------------------------------------
# Eq. (5) against the exact expected gradient
# --------------------------------------------------------------------------------------------
class FieldDiscrepancy(NamedTuple):
    r"""Eq. (5) against the exact expected gradient at some weights (:func:`field_discrepancy`).

    ``effective`` and ``exact`` (..., N): :math:`\tfrac12\varphi(a)-\tfrac12(\Sigma_0+\Sigma_1)w` and
    :math:`\mathbb E[\mathbb 1(h\ge0)X\mid Y=1]-\tfrac12(\Sigma_0+\Sigma_1)w`, the exact :math:`-\nabla\mathcal L`
    of the task (class 0 enters only through Σ₀, by sign symmetry); ``relative`` (...):
    :math:`\|F_\text{exact}-F_\text{eff}\|/\|\tfrac12\varphi(a)\|`, the relative error of Eq. (5)'s
    gated mean :math:`\tfrac12\varphi(a)`.
    """

    effective: np.ndarray
    exact: np.ndarray
    relative: np.ndarray


@functools.partial(jax.jit, static_argnames=("grid", "ring"))
def _gated_mean(w: jax.Array, rows: jax.Array, grid: tuple[int, ...], ring: bool) -> jax.Array:
    """E[1(⟨w, X⟩ ≥ 0) X] over the rows (S, N) and, on the ring, every cyclic shift of each; w (B, N).

    On the ring by FFT over the grid axes: with X_s = X rolled by s, h_s = Σ_j x_j w_{j+s} (a
    correlation) and Σ_s 1(h_s ≥ 0) X_s (a convolution). One w at a time (``lax.map``): the
    (S, N) gates of one w are the memory peak.
    """
    if not ring:
        return jax.lax.map(lambda v: (rows @ v >= 0).astype(rows.dtype) @ rows, w) / rows.shape[0]
    axes = tuple(range(1, len(grid) + 1))
    x_hat = jnp.fft.rfftn(rows.reshape(-1, *grid), axes=axes)

    def one(v):
        h = jnp.fft.irfftn(jnp.conj(x_hat) * jnp.fft.rfftn(v.reshape(grid))[None], s=grid, axes=axes)
        gate = (h >= 0).astype(rows.dtype)
        return jnp.fft.irfftn(jnp.fft.rfftn(gate, axes=axes) * x_hat, s=grid, axes=axes).sum(axis=0).ravel()

    return jax.lax.map(one, w) / (rows.shape[0] * math.prod(grid))


def _class1_rows(built: RealImageTask) -> jax.Array:
    source = built.model1.source if isinstance(built.model1, RingModel) else built.model1
    return jnp.asarray(source.samples)


def field_discrepancy(built: RealImageTask, w: Any) -> FieldDiscrepancy:
    r"""Compare Eq. (5)'s right-hand side with the exact expected gradient of the drawn data at ``w``.

    The class-1 law is finite (the stored rows, and on the ring each of them under every cyclic
    shift), so :math:`\mathbb E[\mathbb 1(h\ge0)X\mid Y=1]` is an exact finite sum (float64; by FFT
    on the ring).

    Parameters
    ----------
    built : RealImageTask
    w : array_like
        (N,) or (B, N) non-zero weights.

    Returns
    -------
    FieldDiscrepancy
    """
    built = _check_built(built)
    settings = built.settings
    w = v.finite_real_array("w", w)
    if w.ndim not in (1, 2) or w.shape[-1] != settings.N:
        raise ValueError(f"w must have shape ({settings.N},) or (B, {settings.N}), got {w.shape}")
    stack = np.atleast_2d(w)
    if np.any(np.einsum("bi,ij,bj->b", stack, built.cov1, stack) <= 0):
        raise ValueError("w must be non-zero (w^T Sigma1 w > 0)")
    ring = settings.geometry == "ring"
    gated = np.asarray(_gated_mean(jnp.asarray(stack), _class1_rows(built), settings.shape, ring))
    linear = stack @ (0.5 * (built.cov0 + built.cov1))
    effective = np.asarray(theory.effective_vector_field(stack, built.amplifier, built.cov0, built.cov1))
    exact = gated - linear
    half_phi = effective + linear
    relative = np.linalg.norm(exact - effective, axis=-1) / np.linalg.norm(half_phi, axis=-1)
    if w.ndim == 1:
        effective, exact, relative = effective[0], exact[0], relative[0]
    return FieldDiscrepancy(effective, exact, np.asarray(relative))


@functools.partial(jax.jit, static_argnames=("grid", "ring", "steps"))
def _exact_segment(w, rows, linear, lr, grid, ring, steps):
    step = lambda _, w: w + lr * (_gated_mean(w, rows, grid, ring) - w @ linear)  # noqa: E731
    return jax.lax.fori_loop(0, steps, step, w)


def run_exact_flow(key: jax.Array, built: RealImageTask, *, duration: float | None = None) -> FlowRun:
    r"""Gradient descent on the exact expected loss of the drawn task, from the starts of :func:`run_flow`.

    :math:`w\leftarrow w+\eta\,(\mathbb E[\mathbb 1(h\ge0)X\mid Y=1]-\tfrac12(\Sigma_0+\Sigma_1)w)`, the
    expectation over the finite class-1 law (:func:`field_discrepancy`): SGD without its noise, and
    Eq. (5) without assumptions A1-A3. Its cost is that of a batch of all stored rows (times N on the
    ring) per step: about 15 s for 2 starts, 5000 rows of 40 pixels and t = 60 on 2 CPU cores.

    Parameters
    ----------
    key : jax.Array
        PRNG key (the starts come from ``fold_in(key, 0)``, as in :func:`run_flow` and :func:`run_sgd`).
    built : RealImageTask
    duration : float or None
        The time to run (> 0); None for ``settings.flow_time``.

    Returns
    -------
    FlowRun
    """
    key = v.key("key", key)
    built = _check_built(built)
    settings = built.settings
    duration = settings.flow_time if duration is None else v.positive("duration", duration)
    steps = max(1, round(duration / built.lr))
    marks = np.unique(np.round(np.linspace(0, steps, settings.checkpoints)).astype(int))
    rows, linear = _class1_rows(built), jnp.asarray(0.5 * (built.cov0 + built.cov1))
    w = jnp.asarray(_starts(jax.random.fold_in(key, 0), settings))
    out = [np.asarray(w)]
    for gap in np.diff(marks):
        w = _exact_segment(w, rows, linear, built.lr, settings.shape, settings.geometry == "ring", int(gap))
        out.append(np.asarray(w))
    return _flow_run(marks * built.lr, np.stack(out, axis=1), settings, built.lr, steps)
