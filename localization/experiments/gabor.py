r"""The Gabor chapter's back-end: Gabor fits of fields on a ring and a periodic uncertainty product.

Research notes 001 ("Uncertainty principle") conjecture that learned fields are 1-D Gabor wavelets,
and that a position–frequency uncertainty decreases during training towards its minimum. This module
gives the two tools the chapter *The Gabor hypothesis* needs to test that, for fields on the ring of
``n`` sites (float64 NumPy/SciPy; every function is vectorised over leading axes of fields; N = n in
the formulas).

* :func:`periodic_gabor` — the periodisation of a real-line Gabor (Gaussian envelope × cosine) on the
  ring, for any real frequency; ``frequency=0`` gives the wrapped Gaussian bump (:func:`wrapped_gaussian`).
* :func:`fit_sinusoid`, :func:`fit_bump`, :func:`fit_gabor` — least-squares fits with their relative
  residual :math:`\lVert w-\hat w\rVert^2/\lVert w\rVert^2` (:class:`Fit`). The sinusoid fit is exact (the
  DFT); the bump and Gabor fits project out the linear amplitude and phase and run
  ``scipy.optimize.least_squares`` on the rest from several starts (FFT peak, envelope peak and width,
  best sinusoid, best bump), so that the Gabor residual never exceeds the other two.
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

The fits and the optimisation make this a back-end (``experiments/``); the two closed forms stay beside
the product they bound, the chapter's one use of them.
"""

from __future__ import annotations

import math
from typing import Any

import numpy as np
from scipy import optimize

from localization import validation as v
from localization.pytree import pytree_dataclass

__all__ = [
    "Fit",
    "periodic_gabor",
    "wrapped_gaussian",
    "fit_sinusoid",
    "fit_bump",
    "fit_gabor",
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


@pytree_dataclass(eq=False)
class Fit:
    r"""Least-squares fits of fields with shape (..., N): one entry per field.

    Attributes
    ----------
    amplitude : (...) amplitude R ≥ 0 of :math:`R\,e(x)\cos(2\pi f x/N+\varphi)`, x = j − center.
    center : (...) envelope centre in [0, N) (sites; NaN for the sinusoid, which has none).
    width : (...) envelope standard deviation s in sites (inf for the sinusoid).
    frequency : (...) carrier frequency f ≥ 0 in cycles per ring (0 for the bump).
    phase : (...) carrier phase φ in (−π, π].
    residual : (...) relative residual ‖w − fit‖²/‖w‖² in [0, 1].
    """

    amplitude: np.ndarray
    center: np.ndarray
    width: np.ndarray
    frequency: np.ndarray
    phase: np.ndarray
    residual: np.ndarray


def _fields(name: str, w: Any, minimum: int = 4) -> np.ndarray:
    if isinstance(w, (bool, str, bytes)) or w is None:
        raise TypeError(f"{name} must be a real array of shape (..., N), got {type(w).__name__}")
    arr = np.asarray(w)
    if not (np.issubdtype(arr.dtype, np.floating) or np.issubdtype(arr.dtype, np.integer)):
        raise TypeError(f"{name} must be a real array of shape (..., N), got dtype {arr.dtype}")
    arr = arr.astype(np.float64)
    if arr.ndim < 1 or arr.shape[-1] < minimum:
        raise ValueError(f"{name} must have shape (..., N) with N >= {minimum}, got shape {arr.shape}")
    if not np.all(np.isfinite(arr)):
        raise ValueError(f"{name} must be finite, got {int(np.sum(~np.isfinite(arr)))} NaN/inf entries")
    norms = np.sum(arr**2, axis=-1)
    if np.any(norms == 0):
        raise ValueError(f"{name} must have no all-zero field (index {np.argwhere(norms == 0)[0].tolist()})")
    return arr


def _ring(n: Any) -> int:
    return v.integer("n", n, minimum=4)


def periodic_gabor(
    n: int, center: Any, width: Any, frequency: Any, phase: Any = 0.0, amplitude: Any = 1.0
) -> np.ndarray:
    r"""Evaluate the periodic Gabor on the ring of N = ``n`` sites.

    :math:`G_j=A\sum_{m\in\mathbb Z}e^{-x_m^2/(2s^2)}\cos(2\pi f x_m/N+\varphi)`, :math:`x_m=j-c-mN`:
    the periodisation of the real-line Gabor, periodic for every real f; for integer f it equals the
    wrapped Gaussian envelope times :math:`\cos(2\pi f(j-c)/N+\varphi)`.

    Parameters
    ----------
    n : number of sites N >= 4.
    center, width, frequency, phase, amplitude : the envelope centre c (sites), its standard deviation
        s > 0 (sites), the carrier frequency f (cycles per ring, any real), the phase φ and the amplitude
        A; finite, broadcast against each other to a shape (...).

    Returns
    -------
    (..., N) float64 array.

    Raises
    ------
    ValueError
        n < 4, width <= 0, or a non-finite parameter.
    """
    N = _ring(n)
    c, s, f, ph, a = (np.asarray(x, dtype=np.float64) for x in (center, width, frequency, phase, amplitude))
    for name, x in [("center", c), ("width", s), ("frequency", f), ("phase", ph), ("amplitude", a)]:
        if not np.all(np.isfinite(x)):
            raise ValueError(f"{name} must be finite, got {x}")
    if np.any(s <= 0):
        raise ValueError(f"width must be > 0 (sites), got {s}")
    c, s, f, ph, a = np.broadcast_arrays(c, s, f, ph, a)
    wraps = int(math.ceil(8.0 * float(np.max(s)) / N)) + 1  # terms beyond 8 s are below e^{-32}
    m = np.arange(-wraps, wraps + 1, dtype=np.float64)
    x = np.arange(N, dtype=np.float64)[:, None] - c[..., None, None] - N * m  # (..., N, M)
    env = np.exp(-(x**2) / (2.0 * s[..., None, None] ** 2))
    carrier = np.cos(2.0 * np.pi * f[..., None, None] * x / N + ph[..., None, None])
    return a[..., None] * np.sum(env * carrier, axis=-1)


def wrapped_gaussian(n: int, center: Any, width: Any, amplitude: Any = 1.0) -> np.ndarray:
    """Evaluate the wrapped Gaussian bump: :func:`periodic_gabor` with frequency 0 and phase 0.

    Parameters
    ----------
    n : number of sites N >= 4.
    center, width, amplitude : as in :func:`periodic_gabor`.

    Returns
    -------
    (..., N) float64 array.
    """
    return periodic_gabor(n, center, width, 0.0, 0.0, amplitude)


def fit_sinusoid(w: Any) -> Fit:
    r"""Fit the best single sinusoid :math:`R\cos(2\pi kj/N+\varphi)`, integer k in [0, N/2], to each field.

    Exact: the sinusoids of different k are orthogonal, so the best one keeps the DFT pair ±k with the
    largest energy and the relative residual is 1 − (that energy)/‖w‖². (The continuous-frequency fit of
    the Gaussian chapter is ``field_analysis.fit_continuous_sinusoid``.)

    Parameters
    ----------
    w : (..., N) real fields, N >= 4, finite, none all-zero.

    Returns
    -------
    :class:`Fit` with entries of shape (...): centre NaN, width inf, frequency k.
    """
    w = _fields("w", w)
    N = w.shape[-1]
    F = np.fft.rfft(w, axis=-1)  # (..., N//2 + 1)
    weight = np.full(F.shape[-1], 2.0)
    weight[0] = 1.0
    if N % 2 == 0:
        weight[-1] = 1.0
    energy = weight * np.abs(F) ** 2 / N  # energy of w at frequency k (Parseval)
    k = np.argmax(energy, axis=-1)
    best = np.take_along_axis(energy, k[..., None], axis=-1)[..., 0]
    Fk = np.take_along_axis(F, k[..., None], axis=-1)[..., 0]
    amplitude = weight[k] * np.abs(Fk) / N
    total = np.sum(w**2, axis=-1)
    residual = np.clip(1.0 - best / total, 0.0, 1.0)
    shape = residual.shape
    return Fit(
        amplitude=amplitude,
        center=np.full(shape, np.nan),
        width=np.full(shape, np.inf),
        frequency=k.astype(np.float64),
        phase=np.angle(Fk),
        residual=residual,
    )


def _columns(N: int, c: float, s: float, f: float) -> np.ndarray:
    """(N, 2): the periodic Gabor with phase 0 and with phase −π/2 (cosine and sine carriers)."""
    wraps = int(math.ceil(8.0 * s / N)) + 1
    x = np.arange(N, dtype=np.float64)[:, None] - c - N * np.arange(-wraps, wraps + 1)
    env = np.exp(-(x**2) / (2.0 * s * s))
    arg = 2.0 * np.pi * f * x / N
    return np.stack([np.sum(env * np.cos(arg), axis=1), np.sum(env * np.sin(arg), axis=1)], axis=1)


def _projected(theta: np.ndarray, w: np.ndarray, gabor: bool) -> tuple[np.ndarray, np.ndarray]:
    X = _columns(w.size, theta[0], theta[1], theta[2] if gabor else 0.0)
    if not gabor:
        X = X[:, :1]
    coef, *_ = np.linalg.lstsq(X, w, rcond=None)
    return w - X @ coef, coef


def _grid_start(w: np.ndarray, gabor: bool) -> np.ndarray:
    """Return the (F, 3) best (centre, width, frequency) on a grid, for fields w (F, N).

    Templates at centres 0, ¼, ½, ¾ are correlated with every field at all integer shifts at once (FFT),
    the amplitude and phase projected out with each template's 2 × 2 Gram matrix (shift invariant).
    """
    F, N = w.shape
    widths = np.geomspace(0.5, N, 25)
    freqs = np.arange(0.0, N / 2 + 1e-9, 0.25) if gabor else np.zeros(1)
    fracs = np.arange(4) / 4.0
    best = np.full(F, np.inf)
    theta = np.zeros((F, 3))
    W = np.fft.fft(w, axis=-1)
    norm = np.sum(w**2, axis=-1)
    for c in fracs:
        for s in widths:
            wraps = int(math.ceil(8.0 * s / N)) + 1
            x = np.arange(N, dtype=np.float64)[:, None] - c - N * np.arange(-wraps, wraps + 1)  # (N, M)
            env = np.exp(-(x**2) / (2.0 * s * s))
            arg = 2.0 * np.pi * freqs[:, None, None] * x / N  # (Q, N, M)
            X = np.stack([np.sum(env * np.cos(arg), axis=-1), np.sum(env * np.sin(arg), axis=-1)], axis=-1)
            if not gabor:
                X = X[..., :1]
            gram = np.einsum("qnk,qnl->qkl", X, X) + 1e-12 * np.eye(X.shape[-1])
            # b[f, q, shift, k] = sum_j w[f, j + shift] X[q, j, k]
            b = np.fft.ifft(W[:, None, :, None] * np.conj(np.fft.fft(X, axis=1))[None], axis=2).real
            sol = np.linalg.solve(gram[None, :, None], b[..., None])[..., 0]
            explained = np.sum(b * sol, axis=-1)  # (F, Q, N)
            flat = explained.reshape(F, -1)
            idx = np.argmax(flat, axis=1)
            cost = norm - flat[np.arange(F), idx]
            q, shift = np.unravel_index(idx, explained.shape[1:])
            better = cost < best
            best = np.where(better, cost, best)
            theta[better] = np.stack([c + shift, np.full(F, s), freqs[q]], axis=1)[better]
    return theta


def _fit(w: Any, gabor: bool) -> Fit:
    w = _fields("w", w)
    shape, N = w.shape[:-1], w.shape[-1]
    flat = w.reshape(-1, N)
    starts = _grid_start(flat, gabor)
    lo = np.array([-N, 0.5, 0.0])
    hi = np.array([2.0 * N, float(N), N / 2.0])
    if not gabor:
        lo, hi = lo[:2], hi[:2]
    out = np.zeros((flat.shape[0], 6))
    for i, wi in enumerate(flat):  # scipy's least_squares refines one field at a time from its grid start
        x0 = np.clip(starts[i, : lo.size], lo, hi)
        sol = optimize.least_squares(
            lambda th, wi=wi: _projected(th, wi, gabor)[0], x0, bounds=(lo, hi), method="trf", xtol=1e-10
        )
        theta = sol.x if sol.cost <= 0.5 * float(_projected(x0, wi, gabor)[0] @ _projected(x0, wi, gabor)[0]) else x0
        r, coef = _projected(theta, wi, gabor)
        A, B = (coef[0], coef[1]) if gabor else (coef[0], 0.0)
        f = theta[2] if gabor else 0.0
        out[i] = [np.hypot(A, B), theta[0] % N, theta[1], f, np.arctan2(-B, A), float(r @ r) / float(wi @ wi)]
    out = out.reshape(*shape, 6)
    return Fit(*(np.clip(out[..., 5], 0.0, 1.0) if j == 5 else out[..., j] for j in range(6)))


def fit_bump(w: Any) -> Fit:
    """Fit a least-squares wrapped Gaussian bump (amplitude of either sign, centre, width in [0.5, N]).

    A negative amplitude is reported as R > 0 with phase π.

    Parameters
    ----------
    w : (..., N) real fields, N >= 4, finite, none all-zero.

    Returns
    -------
    :class:`Fit` with entries of shape (...): frequency 0.
    """
    return _fit(w, gabor=False)


def fit_gabor(w: Any) -> Fit:
    """Fit a least-squares periodic Gabor (:func:`periodic_gabor`) to each field.

    Width in [0.5, N] sites, real frequency in [0, N/2]. The grid start contains the sinusoids (width N,
    integer frequency; the envelope is then constant to 1e-8) and the bumps (frequency 0), and the
    refined bump of :func:`fit_bump` replaces the Gabor where it fits better, so the residual never
    exceeds the bump's and, up to the optimiser's tolerance, the sinusoid's.

    Parameters
    ----------
    w : (..., N) real fields, N >= 4, finite, none all-zero.

    Returns
    -------
    :class:`Fit` with entries of shape (...).
    """
    gabor, bump = _fit(w, gabor=True), _fit(w, gabor=False)
    better = bump.residual < gabor.residual
    return Fit(*(np.where(better, getattr(bump, n), getattr(gabor, n)) for n in Fit.leaf_fields))


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
    w = _fields("w", w, minimum=2)
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
        arr = _fields("f", arr)
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
        arr = analytic_signal(_fields("w", arr))
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
    N = _ring(n)
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
    N = _ring(n)
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
    N = _ring(n)

    def objective(w):
        tau, sigma = circular_moments(w)
        t2, s2 = abs(complex(tau)) ** 2, abs(complex(sigma)) ** 2
        return math.log((1.0 - t2) * (1.0 - s2) / (t2 * s2))

    j = np.arange(N)
    x0 = np.exp(-(np.minimum(j, N - j) ** 2) / (2.0 * N / (2.0 * np.pi)))
    sol = optimize.minimize(objective, x0, method="BFGS", options={"gtol": 1e-10, "maxiter": 2000})
    field = sol.x / np.linalg.norm(sol.x)
    return float(uncertainty_product(field, analytic=False)), field
