r"""The Gabor chapter's back-end, uncertainty: Breitenberger's periodic uncertainty product on a ring.

Research notes 001 ("Uncertainty principle") conjecture that a position–frequency uncertainty of the
learned fields decreases during training towards its minimum. This module measures that uncertainty
for fields on the ring of ``n`` sites and gives its bound (float64 NumPy/SciPy; every function is
vectorised over leading axes of fields; N = n in the formulas). The Gabor family and the fits of the
same chapter are :mod:`localization.experiments.gabor`.

* :func:`circular_moments`, :func:`spreads`, :func:`uncertainty_product` — Breitenberger's periodic
  uncertainty product on the lattice :math:`\mathbb Z_N` (chapter Eq. (eq-gb-product)), with
  :math:`\tau=\langle f,Mf\rangle/\lVert f\rVert^2` (position, :math:`M=\operatorname{diag}e^{2\pi ij/N}`)
  and :math:`\sigma=\langle f,Tf\rangle/\lVert f\rVert^2` (frequency, :math:`T` the shift; equivalently the
  DFT power's circular mean, and :math:`\lVert Tf-f\rVert^2=2\lVert f\rVert^2(1-\operatorname{Re}\sigma)`,
  the discrete derivative). A real field is first replaced by its analytic signal (:func:`analytic_signal`)
  unless ``analytic=False``.
* :func:`uncertainty_bound` — the lower bound :math:`\tfrac{N}{2\pi}\sin\tfrac{\pi}{N}` proved in the
  chapter; :func:`gaussian_uncertainty` — the closed form for sampled Gaussians;
  :func:`lattice_minimum` — the minimum over real fields, by optimisation.

The optimisation and the measurements of learned fields make this a back-end (``experiments/``); the
two closed forms stay beside the product they bound, the chapter's one use of them.
"""

from __future__ import annotations

import math
from typing import Any

import numpy as np
from scipy import optimize

from localization import validation as v

__all__ = [
    "analytic_signal",
    "circular_moments",
    "spreads",
    "uncertainty_product",
    "uncertainty_bound",
    "gaussian_uncertainty",
    "lattice_minimum",
]

#: |τ| or |σ| at or below this is treated as 0 (the corresponding spread is infinite).
ZERO_MOMENT = 1e-12


def analytic_signal(w: Any) -> np.ndarray:
    r"""Return the discrete analytic signal of real fields.

    DFT multiplied by 1 at k = 0 (and k = N/2 for even N), 2 for 0 < k < N/2, 0 for negative
    frequencies; its real part is w. A carrier :math:`e(j)\cos(2\pi kj/N)` with a smooth envelope becomes
    :math:`e(j)e^{2\pi ikj/N}`: the modulus is the envelope and the spectrum is one-sided.

    Parameters
    ----------
    w : (..., N) real fields, N >= 2, finite, none all-zero.

    Returns
    -------
    (..., N) complex128 array.
    """
    w = v.real_fields("w", w, minimum=2)
    N = w.shape[-1]
    h = np.zeros(N)
    h[0] = 1.0
    h[1 : (N + 1) // 2] = 2.0
    if N % 2 == 0:
        h[N // 2] = 1.0
    return np.fft.ifft(np.fft.fft(w, axis=-1) * h, axis=-1)


def circular_moments(f: Any) -> tuple[np.ndarray, np.ndarray]:
    r"""Return the position and frequency moments (τ, σ) of fields.

    :math:`\tau=\sum_j|f_j|^2e^{2\pi ij/N}/\lVert f\rVert^2`,
    :math:`\sigma=\sum_j\bar f_jf_{j+1}/\lVert f\rVert^2=\sum_k|\hat f_k|^2e^{2\pi ik/N}/\lVert\hat f\rVert^2`
    (indices mod N). Both lie in the closed unit disc.

    Parameters
    ----------
    f : (..., N) real or complex fields, N >= 4, finite, none all-zero.

    Returns
    -------
    (tau, sigma) : each (...) complex128.
    """
    arr = np.asarray(f)
    if np.iscomplexobj(arr):
        if arr.ndim < 1 or arr.shape[-1] < 4 or not np.all(np.isfinite(arr)):
            raise ValueError(f"f must be a finite array of shape (..., N) with N >= 4, got shape {arr.shape}")
        arr = arr.astype(np.complex128)
        if np.any(np.sum(np.abs(arr) ** 2, axis=-1) == 0):
            raise ValueError("f must have no all-zero field")
    else:
        arr = v.real_fields("f", arr)
    N = arr.shape[-1]
    p = np.abs(arr) ** 2
    norm = np.sum(p, axis=-1)
    tau = np.sum(p * np.exp(2j * np.pi * np.arange(N) / N), axis=-1) / norm
    sigma = np.sum(np.conj(arr) * np.roll(arr, -1, axis=-1), axis=-1) / norm
    return tau, sigma


def spreads(w: Any, analytic: bool = True) -> tuple[np.ndarray, np.ndarray]:
    r"""Return the Breitenberger spreads of fields: position and frequency variances.

    Position variance :math:`1/|\tau|^2-1` (rad²), frequency variance :math:`(N/2\pi)^2(1/|\sigma|^2-1)`
    ((cycles per ring)²). ``analytic`` (default) measures the analytic signal of a real field; with
    ``analytic=False`` the field itself (complex fields are always measured as given). A spread is
    ``inf`` where its moment vanishes (:math:`|\tau|` or :math:`|\sigma|` ≤ 1e-12: the power is spread
    evenly round the ring) — a value, not an error.

    Parameters
    ----------
    w : (..., N) real or complex fields, N >= 4, finite, none all-zero.
    analytic : measure the analytic signal of a real field (bool).

    Returns
    -------
    (position variance, frequency variance) : each (...) float64.
    """
    if not isinstance(analytic, bool):
        raise TypeError(f"analytic must be a bool, got {analytic!r}")
    arr = np.asarray(w)
    if analytic and not np.iscomplexobj(arr):
        arr = analytic_signal(v.real_fields("w", arr))
    tau, sigma = circular_moments(arr)
    N = arr.shape[-1]

    def variance(m):
        a = np.abs(m)
        with np.errstate(divide="ignore"):
            return np.where(a <= ZERO_MOMENT, np.inf, np.maximum(1.0 / np.maximum(a, ZERO_MOMENT) ** 2 - 1.0, 0.0))

    return variance(tau), (N / (2.0 * np.pi)) ** 2 * variance(sigma)


def uncertainty_product(w: Any, analytic: bool = True) -> np.ndarray:
    r"""Return the periodic uncertainty product :math:`U=\sqrt{V_\theta V_k}` of fields.

    Scale invariant, invariant under cyclic shifts and under modulation by :math:`e^{2\pi ikj/N}`;
    :math:`U\ge` :func:`uncertainty_bound` (chapter theorem). ``inf`` where a spread is infinite (even
    if the other is 0: a delta measured with ``analytic=False``, whose frequency power is flat).

    Parameters
    ----------
    w : (..., N) real or complex fields, as :func:`spreads`.
    analytic : as :func:`spreads`.

    Returns
    -------
    (...) float64 array.
    """
    vt, vk = spreads(w, analytic)
    infinite = np.isinf(vt) | np.isinf(vk)
    safe = np.where(infinite, 0.0, vt) * np.where(infinite, 0.0, vk)
    return np.where(infinite, np.inf, np.sqrt(safe))


def uncertainty_bound(n: Any) -> float:
    r"""Return :math:`\tfrac{N}{2\pi}\sin\tfrac{\pi}{N}`, the lower bound of :func:`uncertainty_product`.

    The bound holds on :math:`\mathbb Z_N` (chapter theorem); it increases to ½ as N → ∞.

    Parameters
    ----------
    n : number of sites N >= 4 (int).

    Returns
    -------
    float
    """
    N = v.integer("n", n, minimum=4)
    return N / (2.0 * math.pi) * math.sin(math.pi / N)


def gaussian_uncertainty(n: Any, width: Any) -> np.ndarray:
    r"""Return the closed-form U of the sampled Gaussian :math:`e^{-(j-c)^2/(2a^2)}` of width a sites.

    On :math:`\mathbb Z_N`,
    :math:`U^2=(e^{u/2}-1)(e^{v/2}-1)/(uv)`, :math:`u=(2\pi a/N)^2`, :math:`v=1/a^2`
    (chapter Eq. (eq-gb-gauss); exact up to aliasing terms of order :math:`e^{-\pi^2a^2}` and
    :math:`e^{-N^2/(4a^2)}`, i.e. for 1 ≲ a ≲ N/8). Minimum :math:`\tfrac{N}{2\pi}(e^{\pi/N}-1)` at
    :math:`a^2=N/(2\pi)`.

    Parameters
    ----------
    n : number of sites N >= 4.
    width : widths a > 0 (sites), any shape.

    Returns
    -------
    float64 array of the shape of ``width``.
    """
    N = v.integer("n", n, minimum=4)
    a = np.asarray(width, dtype=np.float64)
    if not np.all(np.isfinite(a)) or np.any(a <= 0):
        raise ValueError(f"width must be finite and > 0 (sites), got {width}")
    u = (2.0 * np.pi * a / N) ** 2
    vv = 1.0 / a**2
    return np.sqrt(np.expm1(u / 2.0) * np.expm1(vv / 2.0) / (u * vv))


def lattice_minimum(n: Any) -> tuple[float, np.ndarray]:
    r"""Minimise :func:`uncertainty_product` (``analytic=False``) over real fields on :math:`\mathbb Z_N`.

    BFGS on :math:`\log[(1-|\tau|^2)(1-|\sigma|^2)/(|\tau|^2|\sigma|^2)]` from the Gaussian of width
    :math:`\sqrt{N/2\pi}` centred on site 0 (deterministic).

    Parameters
    ----------
    n : number of sites N >= 4.

    Returns
    -------
    (U_min, field) : the minimum (float) and the minimising field, (N,) with unit norm.
    """
    N = v.integer("n", n, minimum=4)

    def objective(w):
        tau, sigma = circular_moments(w)
        t2, s2 = abs(complex(tau)) ** 2, abs(complex(sigma)) ** 2
        return math.log((1.0 - t2) * (1.0 - s2) / (t2 * s2))

    j = np.arange(N)
    x0 = np.exp(-(np.minimum(j, N - j) ** 2) / (2.0 * N / (2.0 * np.pi)))
    sol = optimize.minimize(objective, x0, method="BFGS", options={"gtol": 1e-10, "maxiter": 2000})
    field = sol.x / np.linalg.norm(sol.x)
    return float(uncertainty_product(field, analytic=False)), field
