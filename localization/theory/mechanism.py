r"""Why the effective flow (paper Eq. (5)) localizes: its Fourier modes and its concentration rate.

All class covariances of the book's tasks are circulant (the data are stationary on the ring), so
they are diagonal in the real Fourier basis :math:`Q` of ``localization.data.real_fourier_basis``:
:math:`\Sigma_y=Q\,\mathrm{diag}(\lambda_y)\,Q^\top`. With :math:`u=Q^\top w`,
:math:`s=\sqrt{w^\top\Sigma_1w}` and the ratio :math:`r=\lambda_0/\lambda_1`:

* **linear** φ(a) = c a: :math:`\dot u_k=\tfrac12\lambda_1(k)\,u_k\,[c/s-1-r(k)]`, solved by
  :math:`u_k(t)=u_k(0)\exp\{\tfrac12\lambda_1(k)[D(t)-r(k)\,t]\}` with one scalar
  :math:`D(t)=\int_0^t(c/s-1)`; the single-mode fixed points are
  :math:`u_j=\pm c\sqrt{\lambda_1(j)}/(\lambda_0(j)+\lambda_1(j))`, and mode :math:`k\ne j` grows
  there at rate :math:`\tfrac12\lambda_1(k)[r(j)-r(k)]` (:func:`linear_mode_rates`): the stable
  one minimises :math:`r`;
* **any odd** φ at the constant fixed point :math:`w\propto\mathbf 1`, where every site sees the same
  argument :math:`\alpha=\sqrt{\lambda_1(0)/N}`: mode :math:`k\ne0` grows at rate
  :math:`\tfrac12\lambda_1(k)[(1+r(0))\,\rho-1-r(k)]` with the elasticity
  :math:`\rho=\alpha\varphi'(\alpha)/\varphi(\alpha)` (:func:`constant_mode_stability`);
* the inverse participation ratio :math:`P(w)=\sum w_i^4/(\sum w_i^2)^2` changes at the rate
  :math:`\nabla P\cdot F`, split into the part of the linear flow and the part of
  :math:`\tfrac12[\varphi(a)-c\,a]` (:func:`ipr_rate_split`).

The derivations are in the book's chapter *The mechanism*; ``tests/test_mechanism.py`` checks every
formula against automatic differentiation of the flow.
"""

from __future__ import annotations

import math
from collections.abc import Callable
from typing import NamedTuple

import jax
import jax.numpy as jnp
import numpy as np
from jax.typing import ArrayLike

from localization import validation as v
from localization.data.marginals import GaussianMarginal
from localization.data.spectral import circulant_eigenvalues, real_fourier_basis
from localization.theory.amplifier import PytreeAmplifier, evaluate_amplifier, pad_quadrature
from localization.theory.effective import amplifier_argument, effective_vector_field

__all__ = [
    "GAUSSIAN_SLOPE",
    "FourierSpectra",
    "ConstantModeStability",
    "circulant_spectra",
    "single_mode_amplitude",
    "linear_mode_rates",
    "constant_mode_stability",
    "mode_threshold",
    "amplifier_value_and_slope",
    "effective_gain",
    "ipr_rate_split",
]

#: Slope c = √(2/π) of the Gaussian amplifier φ(a) = c a (unit-variance marginals).
GAUSSIAN_SLOPE = GaussianMarginal.mean_absolute


class FourierSpectra(NamedTuple):
    """Eigenvalues of two circulant covariances in the real Fourier basis.

    One entry per column of ``basis``: ``freq`` (N,) the DFT frequency of each column, ``lam0``, ``lam1`` (N,) float64,
    ``basis`` (N, N) the orthonormal basis :math:`Q`.
    """

    freq: np.ndarray
    lam0: np.ndarray
    lam1: np.ndarray
    basis: np.ndarray


class ConstantModeStability(NamedTuple):
    r"""Linearisation of the flow at its constant fixed point (see :func:`constant_mode_stability`).

    ``alpha`` the common argument of φ, ``elasticity`` :math:`\rho=\alpha\varphi'(\alpha)/\varphi(\alpha)`,
    ``amplitude`` the weight :math:`w_i` of every site, ``rates`` (N,) the growth rate of each
    basis column (column 0, the constant itself, has rate :math:`-\tfrac12(\lambda_0(0)+\lambda_1(0))`),
    ``threshold`` the elasticity above which some mode grows.
    """

    alpha: float
    elasticity: float
    amplitude: float
    rates: np.ndarray
    threshold: float


def circulant_spectra(cov0: ArrayLike, cov1: ArrayLike, *, atol: float = 1e-9) -> FourierSpectra:
    r"""Return the eigenvalues of the class covariances in the shared real Fourier basis.

    The eigenvalues are those of :func:`localization.data.spectral.circulant_eigenvalues` (the DFT of
    each first row), ordered by the columns of :math:`Q` as ``lam[freq]``. Raises ``ValueError``
    unless both are square, of equal size N ≥ 2, circulant (off-diagonal entries of
    :math:`Q^\top\Sigma Q` at most ``atol`` times the largest eigenvalue, and its diagonal equal to
    those eigenvalues to the same tolerance) and positive semi-definite (no eigenvalue below
    ``-validation.PSD_TOLERANCE`` times the largest).

    Parameters
    ----------
    cov0, cov1 : ArrayLike
        (N, N) class covariances Σ₀, Σ₁, circulant.
    atol : float
        Relative tolerance (> 0) of the circulant check.

    Returns
    -------
    FourierSpectra
        ``freq`` (N,), ``lam0``, ``lam1`` (N,) float64 and the basis Q (N, N).
    """
    names = ("cov0", "cov1")
    mats = dict(zip(names, v.covariance_pair(names, cov0, cov1, symmetric=False), strict=True))
    atol = v.positive("atol", atol)
    basis, freq = real_fourier_basis(mats["cov1"].shape[0])
    lams = []
    for name, s in mats.items():
        d = basis.T @ s @ basis
        off = np.abs(d - np.diag(np.diag(d))).max()
        scale = max(np.abs(np.diag(d)).max(), 1e-300)
        if off > atol * scale:
            raise ValueError(
                f"{name} must be circulant (diagonal in the real Fourier basis): largest off-diagonal "
                f"entry {off:.3g} > atol * max eigenvalue = {atol * scale:.3g}"
            )
        # diagonal in Q is not yet circulant (a cos/sin pair may differ): compare with the row's DFT
        lam = circulant_eigenvalues(s[0])[freq]
        gap = np.abs(np.diag(d) - lam).max()
        if gap > atol * scale:
            raise ValueError(
                f"{name} must be circulant (its eigenvalues the DFT of its first row): largest "
                f"difference {gap:.3g} > atol * max eigenvalue = {atol * scale:.3g}"
            )
        if lam.min() < -v.PSD_TOLERANCE * scale:  # a symmetric circulant: its spectrum decides
            raise ValueError(
                f"{name} must be positive semi-definite, got smallest eigenvalue {lam.min():.3g} "
                f"(allowed down to -{v.PSD_TOLERANCE:g} * max |eigenvalue|)"
            )
        lams.append(lam)
    return FourierSpectra(np.asarray(freq), lams[0], lams[1], np.asarray(basis))


def _check_spectra(lam0, lam1):
    lam0 = np.asarray(v.float_array("lam0", lam0), dtype=np.float64)
    lam1 = np.asarray(v.float_array("lam1", lam1), dtype=np.float64)
    if lam0.ndim != 1 or lam0.shape != lam1.shape:
        raise ValueError(f"lam0 and lam1 must be 1-D of equal length, got shapes {lam0.shape} and {lam1.shape}")
    if not (np.all(np.isfinite(lam0)) and np.all(lam0 >= 0)):
        raise ValueError(f"lam0 must be finite and >= 0, got minimum {lam0.min()}")
    if not (np.all(np.isfinite(lam1)) and np.all(lam1 > 0)):
        raise ValueError(f"lam1 must be finite and > 0 (r = lam0 / lam1 is needed), got minimum {lam1.min()}")
    return lam0, lam1


def single_mode_amplitude(lam0: float, lam1: float, slope: float = GAUSSIAN_SLOPE) -> float:
    r"""Return the amplitude :math:`|u_j|=c\sqrt{\lambda_1}/(\lambda_0+\lambda_1)` of a linear flow's fixed point.

    The flow is the linear one (φ(a) = c a, ``slope`` = c > 0); the fixed point lies on one basis column
    with eigenvalues ``lam0`` ≥ 0, ``lam1`` > 0.

    Parameters
    ----------
    lam0, lam1 : float
        The column's eigenvalues of Σ₀ (>= 0) and Σ₁ (> 0).
    slope : float
        The slope c > 0 of the linear amplifier (default √(2/π), the Gaussian's).

    Returns
    -------
    float
        The amplitude :math:`|u_j|`.
    """
    lam0 = v.nonnegative("lam0", lam0)
    lam1 = v.positive("lam1", lam1)
    slope = v.positive("slope", slope)
    return slope * math.sqrt(lam1) / (lam0 + lam1)


def linear_mode_rates(lam0: ArrayLike, lam1: ArrayLike, column: int) -> np.ndarray:
    r"""Return the growth rates of every basis column at the linear flow's fixed point on ``column`` j.

    They are :math:`\tfrac12\lambda_1(k)[r(j)-r(k)]` for k ≠ j (0 for the partner of equal frequency), and
    :math:`-\tfrac12(\lambda_0(j)+\lambda_1(j))` for the amplitude of j itself. Independent of the
    slope c. ``lam0`` ≥ 0 and ``lam1`` > 0 of shape (N,); ``column`` in [0, N).

    Parameters
    ----------
    lam0, lam1 : ArrayLike
        (N,) eigenvalues of Σ₀ (>= 0) and Σ₁ (> 0) per basis column.
    column : int
        The column j of the fixed point, in [0, N).

    Returns
    -------
    np.ndarray
        (N,) float64 growth rates.
    """
    lam0, lam1 = _check_spectra(lam0, lam1)
    n = lam0.shape[0]
    column = v.integer("column", column, minimum=0)
    if column >= n:
        raise ValueError(f"column must be in [0, {n - 1}] (one of the N = {n} basis columns), got {column}")
    r = lam0 / lam1
    rates = 0.5 * lam1 * (r[column] - r)
    rates[column] = -0.5 * (lam0[column] + lam1[column])
    return rates


def _phi_function(phi) -> Callable:
    if not callable(phi):
        raise TypeError(f"phi must be callable (e.g. localization.theory.amplifier_of(...)), got {type(phi).__name__}")
    return phi.core if isinstance(phi, PytreeAmplifier) else phi


@jax.jit
def _value_and_slope(phi, a):
    return jax.jvp(phi.core, (a,), (jnp.ones_like(a),))


def amplifier_value_and_slope(phi: PytreeAmplifier | Callable, a: float) -> tuple[float, float]:
    """Return φ(a) and φ'(a) (forward-mode derivative), one compiled call for every pytree amplifier.

    Pytree amplifiers have their rules padded to one size first: eagerly, ``jax.jvp`` of a quadrature
    amplifier compiles each of its operations again for every new number of quadrature nodes (every
    marginal), and a sweep over gains compiled hundreds of programs. Other callables are
    differentiated directly.

    Parameters
    ----------
    phi : PytreeAmplifier or Callable
        The amplifier (exact and differentiable: not a tabulated one).
    a : float
        The point, in [-1, 1].

    Returns
    -------
    tuple[float, float]
        φ(a) and φ'(a).
    """
    a = jnp.asarray(a, jnp.float64)
    if isinstance(phi, PytreeAmplifier):
        try:
            value, slope = _value_and_slope(pad_quadrature(phi), a)
            return float(value), float(slope)
        except TypeError:  # not a pytree of arrays: differentiated directly
            pass
    value, slope = jax.jvp(_phi_function(phi), (a,), (jnp.asarray(1.0, jnp.float64),))
    return float(value), float(slope)


#: Relative floor below which a class eigenvalue counts as zero in :func:`mode_threshold` (FFT rounding).
SPECTRUM_FLOOR = 1e-12


def mode_threshold(lam0: ArrayLike, lam1: ArrayLike) -> tuple[float, int]:
    r"""Return :math:`\min_{k\ne0}(1+r(k))/(1+r(0))`, :math:`r=\lambda_0/\lambda_1`, and the entry attaining it.

    The elasticity ρ above which a Fourier mode grows at the constant state (:func:`constant_mode_stability`).
    Entry 0 of both spectra must be the constant's; their order is otherwise free (DFT order, the real
    Fourier basis's, a torus flattened). A mode whose λ₁ is zero up to rounding (below
    :data:`SPECTRUM_FLOOR` times the largest) while λ₀ is not has r = ∞ and never attains the minimum.

    Parameters
    ----------
    lam0, lam1 : ArrayLike
        (N,) real eigenvalues of the two class covariances, N >= 2, entry 0 the constant's.

    Returns
    -------
    threshold : float
    index : int
        The entry (1 <= index < N) where the minimum is attained (the first, on ties).

    Raises
    ------
    ValueError
        Spectra of other shapes, λ₁(0) not positive, or a mode where both spectra vanish (r = 0/0).
    """
    lam0 = np.asarray(v.finite_real_array("lam0", lam0), dtype=np.float64)
    lam1 = np.asarray(v.finite_real_array("lam1", lam1), dtype=np.float64)
    if lam0.ndim != 1 or lam0.shape != lam1.shape or lam0.shape[0] < 2:
        raise ValueError(f"lam0 and lam1 must be 1-D of one length >= 2, got shapes {lam0.shape} and {lam1.shape}")
    resolved = lam1 > SPECTRUM_FLOOR * float(np.max(lam1))
    if not resolved[0]:
        raise ValueError(f"lambda1(0) = {lam1[0]:.3g} must be positive (the constant state needs it)")
    unresolved = ~resolved & (lam0 <= SPECTRUM_FLOOR * max(float(np.max(lam0)), 1e-300))
    if np.any(unresolved):  # both classes silent at one frequency: r there is 0/0
        k = int(np.flatnonzero(unresolved)[0])
        raise ValueError(f"both class spectra vanish at entry {k}: the threshold is undefined there")
    ratio = np.where(resolved, lam0 / np.where(resolved, lam1, 1.0), np.inf)
    values = (1.0 + ratio[1:]) / (1.0 + ratio[0])
    index = int(np.argmin(values)) + 1
    return float(values[index - 1]), index


def constant_mode_stability(phi: PytreeAmplifier | Callable, cov0: ArrayLike, cov1: ArrayLike) -> ConstantModeStability:
    r"""Return the constant fixed point of Eq. (5) and the growth rate of every Fourier mode there.

    At :math:`w=w^*\mathbf 1` every site has the argument :math:`\alpha=\sqrt{\lambda_1(0)/N}` and
    :math:`w^*=\varphi(\alpha)/(\lambda_0(0)+\lambda_1(0))`. A perturbation along column k ≠ 0
    leaves :math:`w^\top\Sigma_1w` unchanged to first order, so it grows at the rate
    :math:`\tfrac12\lambda_1(k)[(1+r(0))\,\rho-1-r(k)]` with
    :math:`\rho=\alpha\varphi'(\alpha)/\varphi(\alpha)` (φ' by automatic differentiation of φ;
    use an exact amplifier, not a tabulated one). Some mode grows iff
    :math:`\rho>\min_{k\ne0}(1+r(k))/(1+r(0))` (``threshold``). ``cov1`` must have unit diagonal.

    Parameters
    ----------
    phi : PytreeAmplifier or Callable
        The amplifier φ of Eq. (5) (exact, differentiable).
    cov0, cov1 : ArrayLike
        (N, N) circulant class covariances; ``cov1`` with unit diagonal.

    Returns
    -------
    ConstantModeStability
        α, the elasticity ρ, the amplitude w*, the rates (N,) and the threshold.
    """
    _phi_function(phi)  # checked before the spectra
    sp = circulant_spectra(cov0, cov1)
    lam0, lam1 = _check_spectra(sp.lam0, sp.lam1)
    n = lam0.shape[0]
    if not np.allclose(np.diag(np.asarray(cov1, dtype=np.float64)), 1.0, rtol=0, atol=1e-8):
        raise ValueError("cov1 must have unit diagonal (the flow's A1-A3 assume unit marginal variance)")
    if sp.freq[0] != 0:  # pragma: no cover - the basis puts the constant first
        raise RuntimeError("the real Fourier basis must start with the constant column")
    alpha = math.sqrt(lam1[0] / n)
    value, slope = amplifier_value_and_slope(phi, alpha)
    if not (math.isfinite(value) and math.isfinite(slope)) or value <= 0:
        raise ValueError(f"phi must be finite with phi(alpha) > 0 at alpha = {alpha:.6g}, got phi = {value}")
    rho = alpha * slope / value
    r = lam0 / lam1
    rates = 0.5 * lam1 * ((1.0 + r[0]) * rho - 1.0 - r)
    rates[0] = -0.5 * (lam0[0] + lam1[0])
    threshold, _ = mode_threshold(lam0, lam1)
    return ConstantModeStability(alpha, rho, value / (lam0[0] + lam1[0]), rates, threshold)


def effective_gain(phi: PytreeAmplifier | Callable, a: ArrayLike) -> np.ndarray:
    r"""Return the effective gain :math:`G(a)=\varphi(a)/a` at points ``a`` in [-1, 1] \\ {0}.

    Float64, the shape of ``a``. A linear φ has constant gain. φ is *super-linear* where
    :math:`G(a)>\sqrt{2/\pi}` (above the Gaussian line, the amplifier chapter's definition,
    :func:`localization.theory.linear_deviation`) and *sub-linear* where :math:`G(a)<\sqrt{2/\pi}`;
    whether G *rises* or *falls* with :math:`|a|` is a different property (the mechanism chapter's
    feedback turns on it).

    Parameters
    ----------
    phi : PytreeAmplifier or Callable
        The amplifier φ.
    a : ArrayLike
        Points in [-1, 1] \\ {0}, any shape.

    Returns
    -------
    np.ndarray
        G(a), float64, the shape of ``a``.
    """
    a = np.asarray(v.float_array("a", a, ndim_min=0), dtype=np.float64)
    if not np.all(np.isfinite(a)) or np.any(np.abs(a) > 1) or np.any(a == 0):
        raise ValueError("a must be finite, in [-1, 1] and non-zero (G(0) is the limit phi'(0))")
    return np.asarray(evaluate_amplifier(phi, a)) / a


def ipr_rate_split(
    w: ArrayLike,
    phi: PytreeAmplifier | Callable,
    cov0: ArrayLike,
    cov1: ArrayLike,
    slope: float = GAUSSIAN_SLOPE,
) -> tuple[np.ndarray, np.ndarray]:
    r"""Return the rate :math:`\dot P=\nabla P\cdot F(w)` of the IPR under Eq. (5), split in two.

    With :math:`p_i=w_i^2/\|w\|^2`, :math:`\partial P/\partial w_i=4w_i(p_i-P)/\|w\|^2`, and
    :math:`F=F_{\rm lin}+F_{\rm nl}`, :math:`F_{\rm lin}=\tfrac12[c\,a-(\Sigma_0+\Sigma_1)w]` (the
    flow of the linear amplifier of slope ``slope`` = c), :math:`F_{\rm nl}=\tfrac12[\varphi(a)-c\,a]`.
    Returns ``(linear, nonlinear)`` = :math:`(\nabla P\cdot F_{\rm lin},\nabla P\cdot F_{\rm nl})`,
    each of shape ``w.shape[:-1]``; their sum is :math:`\dot P`.

    Parameters
    ----------
    w : ArrayLike
        (..., N) weights.
    phi : PytreeAmplifier or Callable
        The amplifier φ of Eq. (5).
    cov0, cov1 : ArrayLike
        (N, N) class covariances; ``cov1`` with unit diagonal.
    slope : float
        The slope c > 0 of the linear part (default √(2/π)).

    Returns
    -------
    tuple[np.ndarray, np.ndarray]
        ``(linear, nonlinear)``, each of shape ``w.shape[:-1]``.
    """
    slope = v.positive("slope", slope)
    w = np.asarray(v.float_array("w", w), dtype=np.float64)
    s1 = np.asarray(cov1, dtype=np.float64)
    a = np.asarray(amplifier_argument(w, s1))  # checks w, cov1
    field = np.asarray(effective_vector_field(w, phi, cov0, s1))  # checks phi, cov0
    nonlinear_field = 0.5 * (np.asarray(evaluate_amplifier(phi, a)) - slope * a)
    norm2 = np.sum(w**2, axis=-1, keepdims=True)
    p = w**2 / norm2
    ipr = np.sum(p**2, axis=-1, keepdims=True)
    grad = 4.0 * w * (p - ipr) / norm2
    nonlinear = np.sum(grad * nonlinear_field, axis=-1)
    linear = np.sum(grad * (field - nonlinear_field), axis=-1)
    return linear, nonlinear
