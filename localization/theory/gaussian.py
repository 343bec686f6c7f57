r"""The exact population gradient flow of the bias-free ReLU neuron on Gaussian and elliptical data.

Model M2, :math:`\hat y=\mathrm{ReLU}\langle w,x\rangle`; loss :math:`\mathcal L=\mathbb E[(Y-\hat y)^2]`
(no ½), :math:`P(Y=1)=\tfrac12`, time = steps × learning rate (book conventions, as in
:mod:`localization.theory.effective`). The class laws are elliptical and centred: :math:`X\mid Y=y`
has covariance :math:`\Sigma_y` (unit diagonal) and :math:`X=\Sigma_y^{1/2}S` with :math:`S` spherical.

**Half-space moment.** With :math:`v=\Sigma^{1/2}w`, :math:`\langle w,X\rangle=\langle v,S\rangle`,
and by the spherical symmetry of :math:`S`,
:math:`\mathbb E[\mathbb 1(\langle v,S\rangle\ge0)S]=\mathbb E[S_1\mathbb 1(S_1\ge0)]\,v/\lVert v\rVert`, so

.. math::

    \mathbb E[\mathbb 1(\langle w,X\rangle\ge0)\,X]=\kappa\,\frac{\Sigma w}{\sqrt{w^\top\Sigma w}},
    \qquad \kappa=\tfrac12\,\mathbb E|X_1|,

where :math:`X_1` is one unit-variance coordinate (it has the law of :math:`S_1`). Gaussian data:
:math:`\kappa=1/\sqrt{2\pi}` (:data:`GAUSSIAN_KAPPA`); any other elliptical law: :func:`radial_constant`.

**Flow.** Sign symmetry gives :math:`\mathbb E[\mathrm{ReLU}(h)X]=\tfrac12\mathbb E[hX]`, hence

.. math::

    \mathcal L(w) = \tfrac12-\kappa\sqrt{w^\top\Sigma_1w}+\tfrac14\,w^\top(\Sigma_0+\Sigma_1)w,

    \frac{dw}{dt}=-\nabla\mathcal L=\kappa\,\frac{\Sigma_1w}{\sqrt{w^\top\Sigma_1w}}
    -\tfrac12(\Sigma_0+\Sigma_1)\,w .

This is paper Eq. (5) with the *linear* amplifier :math:`\varphi(a)=2\kappa a` — exactly, not as an
approximation — so its Fourier analysis is that of :mod:`localization.theory.mechanism`: in the
real Fourier basis (circulant covariances) the single-frequency fixed points have amplitude
:math:`2\kappa\sqrt{\lambda_1}/(\lambda_0+\lambda_1)` and the only stable one minimises
:math:`\lambda_0/\lambda_1` (:func:`fixed_points`). The flow is undefined at :math:`w=0` (the
half-space has no direction there); every function here says so rather than return NaN.
"""

from __future__ import annotations

import functools
import math
from collections.abc import Sequence
from typing import NamedTuple

import jax.numpy as jnp
import numpy as np
from jax.typing import ArrayLike

from localization import validation as v
from localization.data.marginals import GaussianMarginal, Marginal
from localization.theory.effective import integrate_effective
from localization.theory.mechanism import circulant_spectra, linear_mode_rates, single_mode_amplitude
from localization.trajectory import Trajectory

__all__ = [
    "GAUSSIAN_KAPPA",
    "radial_constant",
    "half_space_moment",
    "flow",
    "loss",
    "FixedPoint",
    "fixed_points",
    "fixed_point_weights",
    "integrate",
]

#: κ = ½ E|Z| = 1/√(2π) for a standard normal coordinate.
GAUSSIAN_KAPPA = 0.5 * GaussianMarginal.mean_absolute


def radial_constant(marginal: Marginal | None = None) -> float:
    r"""Return κ = ½ ``E|X₁|`` of a unit-variance coordinate of an elliptical law.

    κ is half the marginal's ``mean_absolute`` (a closed form or a half-line quadrature); ``None``
    means Gaussian, 1/√(2π). ``marginal`` is a ``localization.data`` marginal, e.g.
    ``data.StudentT(xi, nu=3).marginal``.

    Parameters
    ----------
    marginal : Marginal or None
        A unit-variance ``localization.data`` marginal; ``None`` for Gaussian data.

    Returns
    -------
    float
        κ > 0.
    """
    if marginal is None:
        return GAUSSIAN_KAPPA
    if not isinstance(marginal, Marginal):
        raise TypeError(f"marginal must be a localization.data Marginal (or None for Gaussian), got {marginal!r}")
    variance = float(marginal.variance)
    if abs(variance - 1.0) > 1e-8:
        raise ValueError(f"marginal must have unit variance (the book's models do), got variance {variance}")
    return 0.5 * float(marginal.mean_absolute)


def _covariances(
    cov0: ArrayLike, cov1: ArrayLike, names: tuple[str, str] = ("cov0", "cov1")
) -> tuple[np.ndarray, np.ndarray]:
    """Two class covariances: square, finite, symmetric, of one shape and positive semi-definite."""
    return v.covariance_pair(names, cov0, cov1)


def _weights(w: ArrayLike, cov: np.ndarray) -> tuple[jnp.ndarray, jnp.ndarray]:
    """W as float64 (..., N) and wᵀΣw (...); raises where wᵀΣw ≤ 0 (the flow is undefined there)."""
    w = v.float64("w", v.float_array("w", w, last_dim=cov.shape[0]))
    if not bool(jnp.all(jnp.isfinite(w))):
        raise ValueError("w must be finite")
    quad = jnp.einsum("...i,ij,...j->...", w, cov, w)
    if bool(jnp.any(quad <= 0)):
        raise ValueError(
            "the flow is undefined where w^T Sigma1 w = 0 (e.g. w = 0: the half-space has no direction); "
            f"got w^T Sigma1 w = {float(jnp.min(quad)):.3g}"
        )
    return w, quad


def _moment(w: ArrayLike, cov: np.ndarray, kappa: float) -> jnp.ndarray:
    """κ Σw / √(wᵀΣw) for validated ``cov`` and ``kappa`` (``w`` is checked here)."""
    w, quad = _weights(w, cov)
    return kappa * (w @ cov) / jnp.sqrt(quad)[..., None]


def half_space_moment(w: ArrayLike, cov: ArrayLike, kappa: float = GAUSSIAN_KAPPA) -> jnp.ndarray:
    r"""Return the half-space moment of a centred elliptical X with covariance ``cov``.

    .. math:: \mathbb E[\mathbb 1(\langle w,X\rangle\ge0)X]=\kappa\,\Sigma w/\sqrt{w^\top\Sigma w}

    Parameters
    ----------
    w : ArrayLike
        (..., N) weights with :math:`w^\top\Sigma w>0`.
    cov : ArrayLike
        (N, N) covariance Σ.
    kappa : float
        Radial constant κ > 0 (:func:`radial_constant`).

    Returns
    -------
    jnp.ndarray
        (..., N) float64.
    """
    cov, _ = _covariances(cov, cov, names=("cov", "cov"))
    return _moment(w, cov, v.positive("kappa", kappa))


def flow(w: ArrayLike, cov0: ArrayLike, cov1: ArrayLike, *, marginal: Marginal | None = None) -> jnp.ndarray:
    r"""Return the exact population gradient flow :math:`dw/dt=-\nabla\mathcal L` of the ReLU neuron.

    The neuron has no bias; the classes are balanced, :math:`X\mid Y=y` centred elliptical with
    covariances ``cov0``, ``cov1`` (N, N) and class-1 coordinate law ``marginal`` (``None``: Gaussian data).

    Parameters
    ----------
    w : ArrayLike
        (..., N) weights with :math:`w^\top\Sigma_1w>0`; leading axes are independent weight vectors.
    cov0, cov1 : ArrayLike
        (N, N) class covariances Σ₀, Σ₁ (symmetric, positive semi-definite).
    marginal : Marginal or None
        Class-1 coordinate law (:func:`radial_constant`); ``None`` for Gaussian data.

    Returns
    -------
    jnp.ndarray
        (..., N) float64: :math:`\kappa\,\Sigma_1w/\sqrt{w^\top\Sigma_1w}-\tfrac12(\Sigma_0+\Sigma_1)w`.
    """
    cov0, cov1 = _covariances(cov0, cov1)
    moment = _moment(w, cov1, radial_constant(marginal))
    return moment - 0.5 * (v.float64("w", w) @ (cov0 + cov1))


def loss(w: ArrayLike, cov0: ArrayLike, cov1: ArrayLike, *, marginal: Marginal | None = None) -> jnp.ndarray:
    r"""Return the population loss :math:`\tfrac12-\kappa\sqrt{w^\top\Sigma_1w}+\tfrac14w^\top(\Sigma_0+\Sigma_1)w`.

    Same arguments as :func:`flow`; defined at w = 0 too, where it is ½. Returns (...,).

    Parameters
    ----------
    w : ArrayLike
        (..., N) weights.
    cov0, cov1 : ArrayLike
        (N, N) class covariances.
    marginal : Marginal or None
        Class-1 coordinate law; ``None`` for Gaussian data.

    Returns
    -------
    jnp.ndarray
        (...) float64.
    """
    cov0, cov1 = _covariances(cov0, cov1)
    kappa = radial_constant(marginal)
    w = v.float64("w", v.float_array("w", w, last_dim=cov1.shape[0]))
    quad1 = jnp.einsum("...i,ij,...j->...", w, cov1, w)
    quad = jnp.einsum("...i,ij,...j->...", w, cov0 + cov1, w)
    return 0.5 - kappa * jnp.sqrt(jnp.maximum(quad1, 0.0)) + 0.25 * quad


class FixedPoint(NamedTuple):
    r"""A fixed point of the flow on one frequency (a cos/sin pair: a circle of them, any phase).

    ``freq`` the DFT frequency; ``columns`` the indices of its real-Fourier-basis columns (one, or
    two for a cos/sin pair); ``amplitude`` :math:`\lVert u\rVert` of its Fourier coordinates;
    ``rates`` (N,) the Jacobian's eigenvalues at it, one per basis column (the amplitude's own rate
    at ``columns[0]``, 0 for the phase of a pair); ``stable`` whether every other rate is < 0;
    ``ratio`` :math:`r=\lambda_0/\lambda_1` of the frequency.
    """

    freq: int
    columns: tuple[int, ...]
    amplitude: float
    rates: np.ndarray
    stable: bool
    ratio: float


def fixed_points(cov0: ArrayLike, cov1: ArrayLike, *, marginal: Marginal | None = None) -> list[FixedPoint]:
    r"""Return the single-frequency fixed points of :func:`flow` for circulant ``cov0``, ``cov1`` (N, N).

    They are sorted by :math:`r=\lambda_0/\lambda_1`, the first being the only stable one when the minimum of r is
    attained at a single frequency. Requires :math:`\lambda_1>0` at every frequency (raises otherwise).

    Mode k ≠ j grows at :math:`\tfrac12\lambda_1(k)[r(j)-r(k)]` at the fixed point on j; the
    amplitude relaxes at :math:`-\tfrac12(\lambda_0(j)+\lambda_1(j))`; a cos/sin partner is neutral.

    Parameters
    ----------
    cov0, cov1 : ArrayLike
        (N, N) circulant class covariances.
    marginal : Marginal or None
        Class-1 coordinate law; ``None`` for Gaussian data.

    Returns
    -------
    list[FixedPoint]
        One per frequency, sorted by r.
    """
    spectra = circulant_spectra(*_covariances(cov0, cov1))
    kappa = radial_constant(marginal)
    points = []
    for f in np.unique(spectra.freq):
        columns = tuple(int(c) for c in np.flatnonzero(spectra.freq == f))
        j = columns[0]
        lam0, lam1 = float(spectra.lam0[j]), float(spectra.lam1[j])
        rates = linear_mode_rates(spectra.lam0, spectra.lam1, j)
        rates[list(columns[1:])] = 0.0  # the phase of a pair, exactly neutral
        others = np.delete(rates, columns)
        stable = bool(rates[j] < 0 and np.all(others < 0))
        amplitude = single_mode_amplitude(lam0, lam1, slope=2.0 * kappa)
        points.append(FixedPoint(int(f), columns, amplitude, rates, stable, lam0 / lam1))
    return sorted(points, key=lambda p: p.ratio)


def fixed_point_weights(point: FixedPoint, n: int, phase: float = 0.0) -> np.ndarray:
    """Return the weights (n,) of ``point`` (from :func:`fixed_points` of n × n covariances).

    They are its single column (``phase`` is then ignored; minus it is the other fixed point), or a cos/sin pair at
    ``phase`` (radians) from the cosine column.

    Parameters
    ----------
    point : FixedPoint
        A fixed point from :func:`fixed_points`.
    n : int
        Input size (>= 2) of the covariances it came from.
    phase : float
        Phase (radians) of a cos/sin pair.

    Returns
    -------
    np.ndarray
        (n,) float64 weights.
    """
    n = v.integer("n", n, minimum=2)
    phase = v.real_scalar("phase", phase)
    if not isinstance(point, FixedPoint):
        raise TypeError(f"point must be a FixedPoint from fixed_points, got {type(point).__name__}")
    if max(point.columns) >= n:
        raise ValueError(f"point has columns {point.columns}, not all in [0, n) for n = {n}")
    from localization.data.spectral import real_fourier_basis

    basis, _ = real_fourier_basis(n)
    u = np.zeros(n)
    if len(point.columns) == 2:
        u[list(point.columns)] = point.amplitude * math.cos(phase), point.amplitude * math.sin(phase)
    else:
        u[point.columns[0]] = point.amplitude
    return np.asarray(basis) @ u


def integrate(
    w0: ArrayLike,
    cov0: ArrayLike,
    cov1: ArrayLike,
    *,
    lr: float,
    steps: int,
    checkpoints: int | Sequence[int],
    marginal: Marginal | None = None,
    method: str = "euler",
) -> Trajectory:
    """Integrate :func:`flow` on SGD time, one step of size ``lr`` per SGD step.

    The checkpoints are those of ``localization.train``, so the trajectory overlays an SGD run without
    reindexing.

    ``w0`` (..., N) initial weights (leading axes vmapped). Same arguments as
    ``theory.integrate_effective``, which this calls with the linear amplifier φ(a) = 2κa — the
    flow is that equation exactly.

    Parameters
    ----------
    w0 : ArrayLike
        (..., N) initial weights.
    cov0, cov1 : ArrayLike
        (N, N) class covariances.
    lr : float
        Step size (the SGD learning rate).
    steps : int
        Number of steps.
    checkpoints : int or Sequence[int]
        Number of checkpoints, or the steps to record (as in ``localization.train``).
    marginal : Marginal or None
        Class-1 coordinate law; ``None`` for Gaussian data.
    method : str
        Integration method of ``theory.integrate_effective``.

    Returns
    -------
    Trajectory
        Weights (..., C, N) at the C checkpoints.
    """
    cov0, cov1 = _covariances(cov0, cov1)
    phi = _linear_amplifier(2.0 * radial_constant(marginal))
    return integrate_effective(w0, phi, cov0, cov1, lr=lr, steps=steps, checkpoints=checkpoints, method=method)


@functools.lru_cache(maxsize=16)
def _linear_amplifier(slope: float):
    """φ(a) = slope · a, one function object per slope: the integrator compiles once per law."""
    return lambda a: slope * a
