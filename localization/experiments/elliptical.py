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
  tasks from one key.
"""

from __future__ import annotations

import math
from collections.abc import Callable, Mapping, Sequence
from typing import Any

import jax
import numpy as np
import scipy.integrate as integ
import scipy.special as special
import scipy.stats as stats

from localization import field_analysis, metrics, train
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
