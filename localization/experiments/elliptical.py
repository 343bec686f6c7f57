r"""The elliptical chapter's back-end: Proposition 3.3 by quadrature, Monte Carlo and training.

The chapter *Elliptical data cannot localize* walks through App. C.4 of the paper: for a centred
elliptical law the exact flow of the ReLU neuron (model M2) is the Gaussian flow with
:math:`1/\sqrt{2\pi}` replaced by the radial constant :math:`\kappa=\tfrac12\mathbb E|X_1|`
(:func:`localization.theory.gaussian.radial_constant`). This module holds what the chapter's cells
compute beyond that library call (float64 NumPy/SciPy; no plotting):

* :func:`kappa_student_t`, :func:`kappa_sphere`, :func:`kappa_radial` — the closed forms of κ for the
  book's three laws (unit-variance coordinates);
* :func:`affine_ks` — the two-sample Kolmogorov–Smirnov statistic of the affine property
  :math:`\langle w,X\rangle\overset d=\sqrt{w^\top\Sigma w}\,X_1`;
* :func:`half_space_moment_z`, :func:`relu_mean_z` — Monte Carlo z-scores of the half-space moment
  :math:`\mathbb E[\mathbb 1(\langle w,X\rangle\ge0)X]=\kappa\Sigma w/\sqrt{w^\top\Sigma w}` and of
  :math:`\mathbb E[\mathrm{ReLU}(\langle w,X\rangle)]=\kappa\sqrt{w^\top\Sigma w}`;
* :func:`substitution_integrals` — App. C.4's constant :math:`C=\int_0^\infty\tilde g(u)\,du` and
  :math:`\int_0^\infty p_S(s)\,s\,ds` by quadrature;
* :func:`flow_jacobian`, :func:`two_frequency_fixed_point` — the Jacobian of the elliptical flow
  by central differences, and a fixed point mixing two frequencies of equal ratio
  :math:`\lambda_0/\lambda_1`;
* :func:`amplifier_gap` — the largest relative difference between Lemma 3.1's φ and the elliptical
  flow's linear :math:`\varphi_{\rm ell}(a)=2\kappa a`;
* :func:`sgd_and_flow`, :func:`sgd_summary`, :func:`flow_summary`, :func:`describe_sgd` — SGD and
  the flow from the same initial weights (paper Fig. 4) and what the chapter measures on them;
* :func:`committee_window_shares` — the window shares of the many-neuron committee (M1) on several
  tasks from one key;
* :class:`T3Protocol`, :data:`T3_CELL7`, :data:`T3_SCRIPT` — the paper's two Student-t protocols,
  continued past t = 100; :func:`t3_protocol_run` measures the fields' frequencies along them,
  :func:`t3_protocol_record` writes ``book/data/t3_protocol_long.json``; :func:`saddle_rate`,
  :func:`saddle_escape_time` and :func:`flow_escape_time` say how fast the frequency-1 saddle is left
  without noise.
"""

from __future__ import annotations

import math
import zlib
from collections.abc import Callable, Mapping, Sequence
from dataclasses import dataclass
from typing import Any

import jax
import numpy as np
import scipy.integrate as integ
import scipy.special as special
import scipy.stats as stats

from localization import data, field_analysis, initialisation, metrics, records, train
from localization import validation as v
from localization.experiments import many_neurons
from localization.theory import evaluate_amplifier
from localization.theory import gaussian as gf

__all__ = [
    "kappa_student_t",
    "kappa_sphere",
    "kappa_radial",
    "affine_ks",
    "half_space_moment_z",
    "relu_mean_z",
    "substitution_integrals",
    "flow_jacobian",
    "circulant_from_spectrum",
    "two_frequency_fixed_point",
    "amplifier_gap",
    "sgd_and_flow",
    "sgd_summary",
    "flow_summary",
    "describe_sgd",
    "committee_window_shares",
    "T3Protocol",
    "T3_CELL7",
    "T3_SCRIPT",
    "T3_PROTOCOLS",
    "saddle_rate",
    "saddle_escape_time",
    "flow_escape_time",
    "t3_protocol_run",
    "t3_seed_key",
    "t3_protocol_record",
]


def kappa_student_t(nu: float) -> float:
    r"""Return κ = ½E|X_1| of the unit-variance Student-t with ``nu`` > 2 degrees of freedom.

    .. math::

       \kappa=\frac{\sqrt{\nu-2}\,\Gamma(\frac{\nu+1}2)}{\sqrt\pi\,(\nu-1)\,\Gamma(\frac\nu2)},

    :math:`1/\pi` at ν = 3, increasing to :math:`1/\sqrt{2\pi}` as ν → ∞.
    """
    nu = v.greater_than("nu", nu, 2.0, "the unit-variance Student-t needs nu > 2")
    return (
        math.sqrt(nu - 2)
        * math.exp(special.gammaln((nu + 1) / 2) - special.gammaln(nu / 2))
        / (math.sqrt(math.pi) * (nu - 1))
    )


def _mean_abs_u1(dim: int) -> float:
    """E|U_1| for U uniform on the unit sphere of R^dim."""
    return math.exp(special.gammaln(dim / 2) - special.gammaln((dim + 1) / 2)) / math.sqrt(math.pi)


def kappa_sphere(dim: int) -> float:
    r"""Return κ of the ellipse surface in ``dim`` ≥ 2 dimensions.

    :math:`X_1=\sqrt D\,U_1`, so
    :math:`\kappa=\tfrac12\sqrt D\,\Gamma(D/2)/(\sqrt\pi\,\Gamma(\tfrac{D+1}2))`.
    """
    dim = v.integer("dim", dim, minimum=2)
    return 0.5 * math.sqrt(dim) * _mean_abs_u1(dim)


def kappa_radial(dim: int) -> float:
    r"""Return κ of the book's radial law in ``dim`` ≥ 2 dimensions.

    :math:`R=2+\operatorname{artanh}V` with V uniform on (0, 1), so :math:`\mathbb ER=2+\ln2`,
    :math:`\mathbb ER^2=4+4\ln2+\pi^2/12`, and :math:`X_1=\sqrt D\,R\,U_1/\sqrt{\mathbb ER^2}`.
    """
    dim = v.integer("dim", dim, minimum=2)
    er, er2 = 2 + math.log(2), 4 + 4 * math.log(2) + math.pi**2 / 12
    return 0.5 * er / math.sqrt(er2) * math.sqrt(dim) * _mean_abs_u1(dim)


def _samples(name: str, x: Any) -> np.ndarray:
    x = np.asarray(x, dtype=np.float64)
    if x.ndim != 2 or x.shape[0] < 2:
        raise ValueError(f"{name} must be (M, N) samples with M >= 2, got shape {x.shape}")
    return x


def _direction(name: str, w: Any, n: int) -> np.ndarray:
    w = np.asarray(w, dtype=np.float64)
    if w.shape != (n,):
        raise ValueError(f"{name} must have shape ({n},), got {w.shape}")
    return w


def _cov(name: str, cov: Any, n: int) -> np.ndarray:
    cov = np.asarray(cov, dtype=np.float64)
    if cov.shape != (n, n):
        raise ValueError(f"{name} must have shape ({n}, {n}), got {cov.shape}")
    return cov


def affine_ks(x: Any, ref: Any, weights: Sequence[Any], cov1: Any) -> tuple[float, float]:
    r"""Test the affine property :math:`\langle w,X\rangle\overset d=\sqrt{w^\top\Sigma w}\,X_1` (KS).

    Parameters
    ----------
    x : array (M, N)
        Samples of X | Y = 1.
    ref : array (M',)
        An independent sample of the first coordinate X_1.
    weights : sequence of arrays (N,)
        The directions w; the first is also tested against N(0, 1).
    cov1 : array (N, N)
        Σ, the covariance of X | Y = 1.

    Returns
    -------
    (float, float)
        The largest :math:`\sqrt{M/2}\,D_{KS}` of :math:`\langle w,X\rangle/\sqrt{w^\top\Sigma w}`
        against ``ref`` over the weights, and :math:`\sqrt M\,D_{KS}` of the first against N(0, 1).
    """
    x = _samples("x", x)
    n_ks, n = x.shape
    cov1 = _cov("cov1", cov1, n)
    if len(weights) == 0:
        raise ValueError("weights must hold at least one direction, got none")
    ws = [_direction("weights[i]", w, n) for w in weights]
    ref = np.asarray(ref, dtype=np.float64)
    stat = []
    for w in ws:
        z = x @ w / math.sqrt(w @ cov1 @ w)
        stat.append(math.sqrt(n_ks / 2) * stats.ks_2samp(z, ref).statistic)
    gauss = math.sqrt(n_ks) * stats.kstest(x @ ws[0] / math.sqrt(ws[0] @ cov1 @ ws[0]), "norm").statistic
    return max(stat), gauss


def half_space_moment_z(x: Any, w: Any, cov1: Any, kappa: float) -> float:
    r"""Return the largest :math:`|z|` over the N entries of Eq. (ell-moment) against the Monte Carlo mean.

    :math:`z_i=(\hat m_i-\kappa(\Sigma w)_i/\sqrt{w^\top\Sigma w})/\mathrm{se}_i` with
    :math:`\hat m` the sample mean of :math:`\mathbb 1(\langle w,x\rangle\ge0)\,x` over the rows of
    ``x`` (M, N); ``w`` (N,), ``cov1`` (N, N) = Σ, ``kappa`` > 0.
    """
    x = _samples("x", x)
    w = _direction("w", w, x.shape[1])
    cov1 = _cov("cov1", cov1, x.shape[1])
    kappa = v.positive("kappa", kappa)
    q = math.sqrt(w @ cov1 @ w)
    mean, se = metrics.mean_and_se(((x @ w) >= 0)[:, None] * x)
    return float(np.max(np.abs(mean - kappa * cov1 @ w / q) / se))


def relu_mean_z(x: Any, w: Any, cov1: Any, kappa: float) -> float:
    r"""Return :math:`|z|` of :math:`\mathbb E[\mathrm{ReLU}(\langle w,X\rangle)]=\kappa\sqrt{w^\top\Sigma w}`.

    This is (C/2)σ of App. C.4, against the Monte Carlo mean over the rows of ``x`` (M, N).
    """
    x = _samples("x", x)
    w = _direction("w", w, x.shape[1])
    cov1 = _cov("cov1", cov1, x.shape[1])
    kappa = v.positive("kappa", kappa)
    q = math.sqrt(w @ cov1 @ w)
    mean, se = metrics.mean_and_se(np.maximum(x @ w, 0.0))
    return float(abs(mean - kappa * q) / se)


def substitution_integrals(
    pdf: Callable[[float], float], sigma: float, support: float = math.inf
) -> tuple[float, float]:
    r"""Compute App. C.4's two integrals by quadrature, for a coordinate density ``pdf`` of X_1.

    With :math:`\tilde g(u)=p_{X_1}(\sqrt u)` and :math:`p_S(s)=\sigma^{-1}\tilde g(s^2/\sigma^2)`:
    returns :math:`C=\int_0^\infty\tilde g(u)\,du` and :math:`\int_0^\infty p_S(s)\,s\,ds`, which
    Eq. (ell-usub) says equals (σ/2) C. ``support`` is the largest :math:`|X_1|` (∞ for unbounded laws).
    """
    sigma = v.positive("sigma", sigma)
    if not (isinstance(support, (int, float)) and support > 0):
        raise ValueError(f"support must be a positive number or inf, got {support!r}")
    c = integ.quad(lambda u: pdf(math.sqrt(u)), 0, support**2 if math.isfinite(support) else np.inf, limit=200)[0]
    relu = integ.quad(
        lambda s: pdf(s / sigma) / sigma * s,
        0,
        sigma * support if math.isfinite(support) else np.inf,
        limit=200,
    )[0]
    return c, relu


def flow_jacobian(w: Any, cov0: Any, cov1: Any, *, marginal: Any = None, rel_step: float = 1e-4) -> np.ndarray:
    r"""Return the (N, N) Jacobian of the elliptical flow (Eq. ell-flow) at ``w`` (N,).

    The flow is :func:`localization.theory.gaussian.flow`; central differences with step
    :math:`h=` ``rel_step`` :math:`\cdot\lVert w\rVert`; ``w`` ≠ 0.
    """
    w = np.asarray(w, dtype=np.float64)
    if w.ndim != 1 or not np.any(w):
        raise ValueError(f"w must be a nonzero vector (N,), got shape {w.shape}")
    rel_step = v.positive("rel_step", rel_step)
    h = rel_step * np.linalg.norm(w)
    cols = [
        (gf.flow(w + h * e, cov0, cov1, marginal=marginal) - gf.flow(w - h * e, cov0, cov1, marginal=marginal))
        / (2 * h)
        for e in np.eye(w.shape[0])
    ]
    return np.asarray(cols).T


def circulant_from_spectrum(half: Any) -> np.ndarray:
    """Return the (N, N) symmetric circulant matrix with DFT eigenvalues ``half`` (N/2 + 1,)."""
    half = np.asarray(half, dtype=np.float64)
    if half.ndim != 1 or half.shape[0] < 2:
        raise ValueError(f"half must be a spectrum (N/2 + 1,) with N >= 2, got shape {half.shape}")
    n = 2 * (half.shape[0] - 1)
    row = np.real(np.fft.ifft(np.concatenate([half, half[1:-1][::-1]])))
    return np.asarray([np.roll(row, i) for i in range(n)])


def two_frequency_fixed_point(kappa: float, n: int, theta: float = 0.7) -> tuple[np.ndarray, np.ndarray, np.ndarray]:
    r"""Return a fixed point of Eq. (ell-flow) that mixes the constant and the alternating column.

    Circulant covariances (spectra chosen by hand, n even) with :math:`r(0)=r(N/2)=0.3`; the point is
    :math:`a(\cos\theta\,e_0+\sin\theta\,e_{N/2})` with :math:`a\sqrt{d^\top\Sigma_1d}=2\kappa/(1+r)`.

    Returns
    -------
    (w, cov0, cov1)
        The point (n,) and the two (n, n) covariances.
    """
    kappa = v.positive("kappa", kappa)
    n = v.integer("n", n, minimum=4)
    if n % 2:
        raise ValueError(f"n must be even (the alternating column), got {n}")
    e0, e_alt = np.ones(n) / math.sqrt(n), (-1.0) ** np.arange(n) / math.sqrt(n)
    lam1 = np.linspace(1.0, 2.0, n // 2 + 1)
    lam0 = lam1 * np.linspace(0.3, 0.9, n // 2 + 1)
    lam0[-1] = lam1[-1] * 0.3  # r(N/2) = r(0)
    a0, a1 = circulant_from_spectrum(lam0), circulant_from_spectrum(lam1)
    direction = math.cos(theta) * e0 + math.sin(theta) * e_alt
    amp = 2 * kappa / ((1 + lam0[0] / lam1[0]) * math.sqrt(direction @ a1 @ direction))
    return amp * direction, a0, a1


def amplifier_gap(phi: Any, kappa: float, a: Any) -> float:
    r"""Return the max over ``a`` of :math:`|\varphi(a)/\varphi_{\rm ell}(a)-1|`.

    ``phi`` is Lemma 3.1's amplifier of a marginal (:func:`localization.theory.amplifier_of`),
    :math:`\varphi_{\rm ell}(a)=2\kappa a` the elliptical flow's; ``a`` (P,) points in (0, 1).
    """
    kappa = v.positive("kappa", kappa)
    a = np.asarray(a, dtype=np.float64)
    if a.ndim != 1 or np.any(a <= 0) or np.any(a >= 1):
        raise ValueError("a must be a vector of points in (0, 1)")
    return float(np.max(np.abs(evaluate_amplifier(phi, a) / (2 * kappa * a) - 1)))


def sgd_and_flow(
    key: jax.Array,
    task: Any,
    w0: Any,
    cov0: Any,
    cov1: Any,
    *,
    marginal: Any,
    lr: float,
    steps: int,
    batch: int,
    checkpoints: int,
    **fields: Any,
) -> tuple[np.ndarray, np.ndarray, np.ndarray]:
    """Run balanced online SGD on ``task`` and integrate Eq. (ell-flow) from ``w0``.

    The flow is :func:`localization.theory.gaussian.integrate`.

    ``w0`` (I, N) initial weights; ``fields`` go to :func:`localization.train.train_online` (e.g.
    ``streams="per_init"``). Returns the SGD weights (I, C, N), the flow's (I, C, N) (float64) and
    the C checkpoint times.
    """
    run = train.train_online(
        key, task, w0, lr=lr, batch=batch, steps=steps, checkpoints=checkpoints, balanced=True, **fields
    )
    sgd = np.asarray(run.weights, dtype=np.float64)
    flow = np.asarray(
        gf.integrate(
            np.asarray(w0, dtype=np.float64),
            cov0,
            cov1,
            lr=lr,
            steps=steps,
            checkpoints=checkpoints,
            marginal=marginal,
        ).weights
    )
    return sgd, flow, np.asarray(run.times)


def sgd_summary(sgd: Any, amplitude: float, tail: int = 40) -> dict[str, Any]:
    r"""Measure SGD fields ``sgd`` (I, C, N) against a constant fixed point, as the chapter does.

    ``amplitude`` is :math:`\lvert u_0\rvert`; the average is over the last ``tail`` checkpoints.

    Returns
    -------
    dict
        ``average`` (I, N) averaged fields; ``fits`` the sinusoid fits of the final fields
        (:func:`field_analysis.fit_continuous_sinusoid`); per field (I,): ``share`` the constant's
        share of the averaged field's :math:`\lVert w\rVert^2`, ``amp``
        :math:`|\mathrm{mean}|\sqrt N/\lvert u_0\rvert` of it, ``norm`` the tail's mean
        :math:`\lVert w\rVert/\lvert u_0\rvert`, ``end`` and ``avg`` the fit errors of the final and the
        averaged fields, ``low`` the share of frequencies 0 and 1 (mean over the tail).
    """
    sgd = np.asarray(sgd, dtype=np.float64)
    if sgd.ndim != 3 or sgd.shape[1] < 1:
        raise ValueError(f"sgd must be (I, C, N), got shape {sgd.shape}")
    amplitude = v.positive("amplitude", amplitude)
    tail = v.integer("tail", tail, minimum=1, maximum=sgd.shape[1])
    n = sgd.shape[-1]
    average = sgd[:, -tail:].mean(1)
    fits = [field_analysis.fit_continuous_sinusoid(x) for x in sgd[:, -1]]
    fits_avg = [field_analysis.fit_continuous_sinusoid(x) for x in average]
    return dict(
        average=average,
        fits=fits,
        share=field_analysis.frequency_power(average)[:, 0],
        amp=np.abs(average.mean(-1)) * math.sqrt(n) / amplitude,
        norm=np.linalg.norm(sgd[:, -tail:], axis=-1).mean(-1) / amplitude,
        end=np.array([f.relative_error for f in fits]),
        avg=np.array([f.relative_error for f in fits_avg]),
        low=field_analysis.frequency_power(sgd[:, -tail:])[..., :2].sum(-1).mean(-1),
    )


def flow_summary(flow: Any, amplitude: float) -> tuple[float, float]:
    r"""Measure where flow trajectories ``flow`` (I, C, N) end against the constant fixed point.

    Returns the smallest share of the constant in the final :math:`\lVert w\rVert^2`, and the
    largest :math:`|\lVert w\rVert/\lvert u_0\rvert-1|` at the end.
    """
    flow = np.asarray(flow, dtype=np.float64)
    if flow.ndim != 3:
        raise ValueError(f"flow must be (I, C, N), got shape {flow.shape}")
    amplitude = v.positive("amplitude", amplitude)
    share = float(field_analysis.frequency_power(flow[:, -1])[:, 0].min())
    amp = float(np.max(np.abs(np.linalg.norm(flow[:, -1], axis=-1) / amplitude - 1)))
    return share, amp


def describe_sgd(summaries: Mapping[str, Mapping[str, Any]]) -> str:
    """Describe :func:`sgd_summary` results as a Markdown list, one line per law.

    Each line gives the min–max over the fields of each measure (``summaries``: name -> summary).
    """
    lines = []
    for name, s in summaries.items():
        lines.append(
            f"* {name}: fit error final {s['end'].min():.3f}-{s['end'].max():.3f}, averaged "
            f"{s['avg'].min():.3f}-{s['avg'].max():.3f}; constant share (averaged field) "
            f"{s['share'].min():.2f}-{s['share'].max():.2f}; |mean| sqrt(N) / |u_0| "
            f"{s['amp'].min():.3f}-{s['amp'].max():.3f}; ||w|| / |u_0| "
            f"{s['norm'].min():.2f}-{s['norm'].max():.2f}; share of frequencies 0-1 "
            f"{s['low'].min():.2f}-{s['low'].max():.2f}"
        )
    return "\n".join(lines)


def committee_window_shares(
    key: jax.Array, settings: Any, tasks: Mapping[str, Any], window: int
) -> dict[str, np.ndarray]:
    """Train the committee ``settings`` on each task from one ``key``; return the window shares.

    ``settings`` is a :class:`~localization.experiments.many_neurons.PopulationSettings`; the window
    shares (:func:`localization.field_analysis.window_share`) are of the final fields: name ->
    (inits · K,).
    """
    window = v.integer("window", window, minimum=1)
    shares = {}
    for name, task in tasks.items():
        run = many_neurons.train_population(key, settings, task=task)
        shares[name] = field_analysis.window_share(run.final.reshape(-1, run.final.shape[-1]), window)
    return shares


# -------------------------------------------------------------------------------------------------
# the Student-t protocols continued: is the frequency-1 field a transient?
# -------------------------------------------------------------------------------------------------
@dataclass(frozen=True)
class T3Protocol:
    """One SGD protocol of the paper's Student-t(3) panel (Fig. 4), continued to a longer horizon.

    The task is the chapter's: Student-t(``nu``) at length-scales ``xi`` on a ring of ``n`` sites,
    balanced batches; every initialisation trains on its own data stream (``streams="per_init"``), as
    each run of the paper's code draws its own.

    Attributes
    ----------
    name : str
        A label (its CRC-32 is folded into the seed's key, so that each protocol has its own stream).
    init_scale : float
        Variance multiplier of the Xavier-normal initial weights (> 0).
    lr : float
        Learning rate (> 0).
    batch : int
        Batch size (>= 2, even: balanced classes).
    inits : int
        Number of initialisations (>= 1).
    steps : int
        SGD steps of the whole run (>= 1); time is ``steps * lr``.
    checkpoints : int
        Evenly spaced checkpoints in ``[0, steps]`` (>= 2); ``reference_step`` must be one of them.
    reference_step : int
        The step at which the paper's own run stops (its ``10**4`` steps): the fields there are the
        protocol's result, and the escape times are counted from it.
    n, xi, nu : int, (float, float), float
        Ring size, length-scales (class 0, class 1), degrees of freedom.

    Raises
    ------
    TypeError, ValueError
        Naming the field, its value and the valid range.
    """

    name: str
    init_scale: float
    lr: float
    batch: int
    inits: int
    steps: int
    checkpoints: int
    reference_step: int = 10_000
    n: int = 40
    xi: tuple[float, float] = (1.0, 3.0)
    nu: float = 3.0

    def __post_init__(self) -> None:
        """Validate every field."""
        if not isinstance(self.name, str) or not self.name:
            raise TypeError(f"name must be a non-empty str, got {self.name!r}")
        v.positive("init_scale", self.init_scale)
        v.positive("lr", self.lr)
        v.integer("batch", self.batch, minimum=2)
        if self.batch % 2:
            raise ValueError(f"batch must be even (balanced classes), got {self.batch}")
        v.integer("inits", self.inits, minimum=1)
        v.integer("steps", self.steps, minimum=1)
        v.integer("checkpoints", self.checkpoints, minimum=2)
        v.integer("reference_step", self.reference_step, minimum=0, maximum=self.steps)
        if self.reference_step not in self.checkpoint_steps:
            raise ValueError(
                f"reference_step must be one of the checkpoints {self.checkpoint_steps}, got {self.reference_step}"
            )
        v.integer("n", self.n, minimum=4)
        if not (isinstance(self.xi, tuple) and len(self.xi) == 2):
            raise TypeError(f"xi must be a pair (class 0, class 1), got {self.xi!r}")
        for i, x in enumerate(self.xi):
            v.positive(f"xi[{i}]", x)
        v.greater_than("nu", self.nu, 2.0, "the unit-variance Student-t needs nu > 2")

    @property
    def checkpoint_steps(self) -> tuple[int, ...]:
        """The C evenly spaced checkpoint steps in ``[0, steps]`` (rounded down to integers)."""
        return tuple(int(s) for s in np.linspace(0, self.steps, self.checkpoints).astype(np.int64))

    @property
    def task(self) -> Any:
        """The Student-t task (``data.LengthscaleTask``)."""
        return data.LengthscaleTask.of(data.StudentT, xi=tuple(float(x) for x in self.xi), nu=float(self.nu))


#: The code's cell 7 (``figures/fig4.ipynb``): Xavier-normal at init_scale 1, lr 0.01, batch 1000,
#: 10^4 steps (t = 100), continued to t = 400 (16 initialisations, checkpoints every t = 10).
T3_CELL7 = T3Protocol(name="cell 7", init_scale=1.0, lr=0.01, batch=1000, inits=16, steps=40_000, checkpoints=41)
#: The script that drew the published panel (``analyses/elliptical_sinusoids.py``): batch 50 000 from
#: init_scale 0.001, lr 0.01, 10^4 steps, continued to t = 200 (2 initialisations, every t = 5).
T3_SCRIPT = T3Protocol(name="script", init_scale=1e-3, lr=0.01, batch=50_000, inits=2, steps=20_000, checkpoints=41)
#: The two protocols of the record ``book/data/t3_protocol_long.json``, by their record key.
T3_PROTOCOLS = {"cell7": T3_CELL7, "script": T3_SCRIPT}


def saddle_rate(cov0: Any, cov1: Any, *, marginal: Any, freq: int = 1) -> float:
    r"""Return the top real part of the Jacobian's eigenvalues at the fixed point of frequency ``freq``.

    The fixed point is the one of :func:`localization.theory.gaussian.fixed_points` at that frequency
    (phase 0.3 for a cosine/sine pair, as the chapter's check); the Jacobian is :func:`flow_jacobian`.
    Positive: an unstable direction grows like :math:`e^{\text{rate}\,t}` (a saddle).

    Parameters
    ----------
    cov0, cov1 : array (N, N)
        The class covariances.
    marginal : Marginal or None
        Class-1 coordinate law (None: Gaussian data).
    freq : int
        The frequency (0 <= freq <= N/2).

    Returns
    -------
    float
        The rate, in units of time = steps * lr.
    """
    cov1 = np.asarray(cov1, dtype=np.float64)
    freq = v.integer("freq", freq, minimum=0, maximum=cov1.shape[-1] // 2)
    point = [p for p in gf.fixed_points(cov0, cov1, marginal=marginal) if p.freq == freq]
    if not point:
        raise ValueError(f"freq {freq} has no fixed point of the flow (valid: a frequency with lambda_1 > 0)")
    w = gf.fixed_point_weights(point[0], cov1.shape[-1], phase=0.3)
    return float(np.linalg.eigvals(flow_jacobian(w, cov0, cov1, marginal=marginal)).real.max())


def saddle_escape_time(share0: Any, rate: float) -> np.ndarray:
    r"""Predict how long a field near the frequency-1 saddle takes to become dominated by the constant.

    Near the saddle the constant's amplitude grows like :math:`e^{\text{rate}\,t}` at nearly fixed
    :math:`\lVert w\rVert`; starting from a share :math:`p_0` of :math:`\lVert w\rVert^2` it outweighs
    frequency 1 once it holds about half of it, after

    .. math:: \tau = \frac{\ln\bigl(1/(2p_0)\bigr)}{2\,\text{rate}} .

    Parameters
    ----------
    share0 : array (...)
        The constant's share of :math:`\lVert w\rVert^2`, in (0, 1/2) (a field dominated by frequency 1
        has less than half).
    rate : float
        The saddle's unstable rate (:func:`saddle_rate`, > 0).

    Returns
    -------
    numpy.ndarray
        (...) times, in units of steps * lr.
    """
    share0 = v.finite_real_array("share0", share0, "shares in (0, 1/2)")
    if np.any(share0 <= 0) or np.any(share0 >= 0.5):
        raise ValueError(f"share0 must lie in (0, 1/2), got values in [{share0.min()}, {share0.max()}]")
    rate = v.positive("rate", rate)
    return np.log(1.0 / (2.0 * share0)) / (2.0 * rate)


def flow_escape_time(w: Any, cov0: Any, cov1: Any, *, marginal: Any, lr: float, steps: int, every: int) -> np.ndarray:
    r"""Integrate Eq. (ell-flow) from fields ``w`` and return when each is first dominated by the constant.

    The flow is :func:`localization.theory.gaussian.integrate` (Euler steps of size ``lr``), recorded
    every ``every`` steps; a field is dominated by the constant when
    :func:`localization.field_analysis.dominant_frequency` is 0.

    Parameters
    ----------
    w : array (I, N)
        Starting fields (none zero).
    cov0, cov1 : array (N, N)
        The class covariances.
    marginal : Marginal or None
        Class-1 coordinate law.
    lr : float
        Step size (> 0).
    steps : int
        Horizon in steps (>= 1).
    every : int
        Recording interval in steps (1 <= every <= steps): the resolution of the result.

    Returns
    -------
    numpy.ndarray
        (I,) float64 first times (steps * lr) at which each field is dominated by the constant (0 if it
        is at the start), ``math.inf`` for a field that is not within the horizon.
    """
    w = np.asarray(w, dtype=np.float64)
    if w.ndim != 2 or w.shape[-1] < 2:
        raise ValueError(f"w must be (I, N) fields with N >= 2, got shape {w.shape}")
    lr = v.positive("lr", lr)
    steps = v.integer("steps", steps, minimum=1)
    every = v.integer("every", every, minimum=1, maximum=steps)
    ck = tuple(range(0, steps + 1, every))
    flow = np.asarray(gf.integrate(w, cov0, cov1, lr=lr, steps=steps, checkpoints=ck, marginal=marginal).weights)
    const = field_analysis.dominant_frequency(flow) == 0  # (I, C)
    times = np.asarray(ck, dtype=np.float64) * lr
    return np.where(const.any(-1), times[np.argmax(const, axis=-1)], math.inf)


def _rounded(x: Any, digits: int = 4) -> list:
    return np.round(np.asarray(x, dtype=np.float64), digits).tolist()


def t3_protocol_run(key: jax.Array, protocol: T3Protocol) -> dict[str, Any]:
    r"""Run a Student-t protocol past the paper's horizon; measure the fields' frequencies at every checkpoint.

    SGD and the noise-free flow from the same Xavier-normal initial weights (:func:`sgd_and_flow`); at
    the reference step (the paper's end, t = 100) the flow is also continued from each SGD field's own
    state, and the saddle's rate predicts when a field dominated by frequency 1 would leave it
    (:func:`saddle_escape_time`, :func:`flow_escape_time`). SGD runs in float32, the flow in float64
    (call ``localization.enable_float64()`` first).

    Parameters
    ----------
    key : jax.Array
        A JAX PRNG key (the initial weights and the data streams are drawn from it).
    protocol : T3Protocol
        The settings.

    Returns
    -------
    dict
        JSON-able: ``times`` (C,); per field and checkpoint (I, C): ``sgd_dominant``
        (:func:`localization.field_analysis.dominant_frequency`), ``sgd_share0``, ``sgd_share1``
        (:func:`localization.field_analysis.frequency_power` of frequencies 0 and 1), ``sgd_norm``
        (:math:`\lVert w\rVert/\lvert u_0\rvert`, the constant fixed point's amplitude), ``flow_dominant``;
        ``reference`` the index of the reference checkpoint; per field (I,), None where the SGD field is
        not dominated by frequency 1 there: ``predicted_escape`` and ``flow_escape`` (None too if the flow
        has not left within the run's remaining horizon); ``saddle_rate``, ``amplitude`` (:math:`\lvert u_0\rvert`),
        ``seconds``.
    """
    import time

    key = v.key("key", key)
    if not isinstance(protocol, T3Protocol):
        raise TypeError(f"protocol must be a T3Protocol, got {type(protocol).__name__}")
    v.require_float64("t3_protocol_run (the flow and its Jacobian)", np.float64)  # before the long SGD run
    start = time.perf_counter()
    task = protocol.task
    cov0, cov1 = (np.asarray(s, dtype=np.float64) for s in task.covariances(protocol.n))
    marginal = task.model1.marginal
    w0 = initialisation.init_weights(
        jax.random.fold_in(key, 0), protocol.n, init_scale=protocol.init_scale, num=protocol.inits
    )
    sgd, flow, times = sgd_and_flow(
        jax.random.fold_in(key, 1),
        task,
        w0,
        cov0,
        cov1,
        marginal=marginal,
        lr=protocol.lr,
        steps=protocol.steps,
        batch=protocol.batch,
        checkpoints=protocol.checkpoint_steps,
        streams="per_init",
    )
    amplitude = float(gf.fixed_points(cov0, cov1, marginal=marginal)[0].amplitude)
    rate = saddle_rate(cov0, cov1, marginal=marginal, freq=1)
    power = field_analysis.frequency_power(sgd)
    dominant = field_analysis.dominant_frequency(sgd)
    ref = protocol.checkpoint_steps.index(protocol.reference_step)
    at_f1 = dominant[:, ref] == 1
    predicted: list[float | None] = [None] * protocol.inits
    escaped: list[float | None] = [None] * protocol.inits
    remaining = protocol.steps - protocol.reference_step
    if at_f1.any() and remaining > 0:
        tau = saddle_escape_time(power[at_f1, ref, 0], rate)
        every = max(1, round(0.5 / protocol.lr))  # half a time unit
        left = flow_escape_time(
            sgd[at_f1, ref], cov0, cov1, marginal=marginal, lr=protocol.lr, steps=remaining, every=min(every, remaining)
        )
        for i, t_pred, t_flow in zip(np.flatnonzero(at_f1), tau, left, strict=True):
            predicted[i] = round(float(t_pred), 2)
            escaped[i] = round(float(t_flow), 2) if math.isfinite(t_flow) else None
    return dict(
        times=_rounded(times, 6),
        sgd_dominant=dominant.tolist(),
        sgd_share0=_rounded(power[..., 0]),
        sgd_share1=_rounded(power[..., 1]),
        sgd_norm=_rounded(np.linalg.norm(sgd, axis=-1) / amplitude),
        flow_dominant=field_analysis.dominant_frequency(flow).tolist(),
        reference=ref,
        predicted_escape=predicted,
        flow_escape=escaped,
        saddle_rate=rate,
        amplitude=amplitude,
        seconds=round(time.perf_counter() - start, 1),
    )


def t3_seed_key(seed: int, protocol: T3Protocol) -> jax.Array:
    """Return the key of ``protocol`` under an integer ``seed``: CRC-32 of ``"t3-protocol/" + name`` folded in."""
    seed = v.integer("seed", seed, minimum=0)
    if not isinstance(protocol, T3Protocol):
        raise TypeError(f"protocol must be a T3Protocol, got {type(protocol).__name__}")
    return jax.random.fold_in(jax.random.key(seed), zlib.crc32(f"t3-protocol/{protocol.name}".encode()))


def t3_protocol_record(
    path: str | None = None,
    *,
    seeds: Sequence[int] = (0, 1, 2),
    protocols: Mapping[str, T3Protocol] | None = None,
    resume: bool = False,
    results: Mapping[int, Mapping[str, Any]] | None = None,
) -> dict[str, Any]:
    """Run :func:`t3_protocol_run` for every protocol and seed; return (and optionally write) the record.

    The record is written by :func:`localization.records.write` after every seed, so a stopped run
    keeps the seeds it finished; with ``resume`` the seeds already in ``path`` are kept (same
    settings required) and only the others run.

    Parameters
    ----------
    path : str or None
        JSON file (``book/data/t3_protocol_long.json``); None: not written.
    seeds : sequence of int
        Non-negative integer seeds, distinct (:func:`t3_seed_key`).
    protocols : mapping str -> T3Protocol, optional
        Record key -> protocol (default :data:`T3_PROTOCOLS`).
    resume : bool
        Keep the seeds already in ``path``.
    results : Mapping of int to Mapping, optional
        For each seed to run, its :func:`t3_protocol_run` result per protocol key, computed elsewhere
        (by ``python -m localization.experiments.runs`` on a Dask cluster); the record is then written once.

    Returns
    -------
    dict
        ``description``, ``command``, ``settings`` (each protocol's fields), ``seeds``: one entry per
        seed with ``seed``, ``commit`` and one :func:`t3_protocol_run` result per protocol key.
    """
    import dataclasses
    import json
    import os

    protocols = T3_PROTOCOLS if protocols is None else protocols
    if not isinstance(protocols, Mapping) or not protocols:
        raise TypeError(f"protocols must be a non-empty mapping of str to T3Protocol, got {protocols!r}")
    for name, protocol in protocols.items():
        if not isinstance(name, str) or not isinstance(protocol, T3Protocol):
            raise TypeError(f"protocols must map str to T3Protocol, got {name!r}: {type(protocol).__name__}")
    if isinstance(seeds, (str, bytes)) or not isinstance(seeds, Sequence) or not seeds:
        raise TypeError(f"seeds must be a non-empty sequence of non-negative integers, got {seeds!r}")
    seeds = [v.integer(f"seeds[{i}]", s, minimum=0) for i, s in enumerate(seeds)]
    if len(set(seeds)) != len(seeds):
        raise ValueError(f"seeds must be distinct, got {seeds}")
    if not isinstance(resume, bool):
        raise TypeError(f"resume must be a bool, got {resume!r}")
    settings = json.loads(json.dumps({k: dataclasses.asdict(p) for k, p in protocols.items()}))
    record: dict[str, Any] = dict(
        description=(
            "experiments.elliptical.t3_protocol_record: M2 on Student-t(3), xi = (1, 3), N = 40, at the paper "
            "code's cell-7 protocol and at the published script's, continued past t = 100; per seed and "
            "protocol the dominant frequency and the shares of frequencies 0 and 1 of every SGD field at every "
            "checkpoint, the flow's dominant frequency, and the predicted and the flow's escape times from t = 100"
        ),
        command=f"nice -n 10 .venv/bin/python -m localization.experiments.runs t3_protocol_long {path}",
        settings=settings,
        seeds=[],
    )
    if resume and path is not None and os.path.exists(path):
        with open(path, encoding="utf-8") as f:
            old = json.load(f)
        if old["settings"] != settings:
            raise ValueError(f"resume: the settings of {path} differ from {settings}")
        record["seeds"] = old["seeds"]
    done = {entry["seed"] for entry in record["seeds"]}
    if results is not None:
        if not isinstance(results, Mapping):
            raise TypeError(f"results must be a mapping of seed to protocol results or None, got {results!r}")
        missing = [s for s in seeds if s not in done and set(results.get(s, ())) != set(protocols)]
        if missing:
            raise ValueError(f"results must hold every protocol of every seed to run, missing seeds {missing}")
    for seed in seeds:
        if seed in done:
            continue
        entry: dict[str, Any] = dict(seed=seed, commit=records.commit())
        for name, protocol in protocols.items():
            entry[name] = (
                t3_protocol_run(t3_seed_key(seed, protocol), protocol) if results is None else results[seed][name]
            )
        record["seeds"].append(entry)
        if path is not None and results is None:
            records.write(path, record, compact=True)
    if path is not None and results is not None:
        records.write(path, record, compact=True)
    return record
