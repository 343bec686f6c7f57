r"""The Gabor chapter's back-end, fits: periodic Gabors on a ring and least-squares fits of fields.

Research notes 001 ("Uncertainty principle") conjecture that learned fields are 1-D Gabor wavelets.
This module gives the chapter *The Gabor hypothesis* the family and the fits that test the first
half of that conjecture, for fields on the ring of ``n`` sites (float64 NumPy/SciPy; every function
is vectorised over leading axes of fields; N = n in the formulas). The second half, a
position–frequency uncertainty that decreases during training towards its minimum, is measured by
:mod:`localization.experiments.uncertainty`.

* :func:`periodic_gabor` — the periodisation of a real-line Gabor (Gaussian envelope × cosine) on the
  ring, for any real frequency; ``frequency=0`` gives the wrapped Gaussian bump (:func:`wrapped_gaussian`).
* :func:`fit_sinusoid`, :func:`fit_bump`, :func:`fit_gabor` — least-squares fits with their relative
  residual :math:`\lVert w-\hat w\rVert^2/\lVert w\rVert^2` (:class:`Fit`). The sinusoid fit is exact (the
  DFT: :func:`localization.field_analysis.fit_sinusoid`, here as a :class:`Fit`); the bump and Gabor
  fits project out the linear amplitude and phase and run
  ``scipy.optimize.least_squares`` on the rest from several starts (FFT peak, envelope peak and width,
  best sinusoid, best bump), so that the Gabor residual never exceeds the other two.

* :func:`fit_families`, :func:`fit_table` — the three fits of each group of fields and the chapter's
  table of them (one field drawn with its fits: :func:`localization.figures.gabor.draw_field_fits`).

The sinusoid fits live in :mod:`localization.field_analysis` (integer frequency, batched:
``fit_sinusoid``; continuous frequency with an offset: ``fit_continuous_sinusoid``).
"""

from __future__ import annotations

import math
from typing import Any

import numpy as np
from scipy import optimize

from localization import field_analysis
from localization import validation as v
from localization.pytree import pytree_dataclass

__all__ = [
    "Fit",
    "periodic_gabor",
    "wrapped_gaussian",
    "fit_sinusoid",
    "fit_bump",
    "fit_gabor",
    "fit_families",
    "fit_table",
]


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
    N = v.integer("n", n, minimum=4)
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

    :func:`localization.field_analysis.fit_sinusoid` (exact, by the DFT) as a member of the Gabor
    family: a Gabor of infinite width, without centre.

    Parameters
    ----------
    w : (..., N) real fields, N >= 4, finite, none all-zero.

    Returns
    -------
    :class:`Fit` with entries of shape (...): centre NaN, width inf, frequency k.
    """
    fit = field_analysis.fit_sinusoid(w)
    shape = fit.residual.shape
    return Fit(
        amplitude=fit.amplitude,
        center=np.full(shape, np.nan),
        width=np.full(shape, np.inf),
        frequency=fit.frequency.astype(np.float64),
        phase=fit.phase,
        residual=fit.residual,
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
    w = v.real_fields("w", w)
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


def fit_families(w: Any) -> tuple[Fit, Fit, Fit]:
    """Fit fields with shape (..., N) by the three families: (Gabor, bump, sinusoid).

    Parameters
    ----------
    w : (..., N) real fields, N >= 4.

    Returns
    -------
    tuple of Fit
        :func:`fit_gabor`, :func:`fit_bump` and :func:`fit_sinusoid` of ``w``.
    """
    return fit_gabor(w), fit_bump(w), fit_sinusoid(w)


def fit_table(fits: dict[str, tuple[Fit, Fit, Fit]]) -> str:
    """Tabulate the fits of groups of fields as Markdown: mean residuals, median Gabor width and frequency.

    Parameters
    ----------
    fits : group name → its (Gabor, bump, sinusoid) fits (:func:`fit_families`).

    Returns
    -------
    str
        A Markdown table, one row per group.
    """
    if not isinstance(fits, dict):
        raise TypeError(f"fits must be a dict of name -> (Gabor, bump, sinusoid) fits, got {type(fits).__name__}")
    rows = [
        "| fields | Gabor $r$ | bump $r$ | sinusoid $r$ | Gabor width $s$ | Gabor frequency $f$ |",
        "| --- | --- | --- | --- | --- | --- |",
    ]
    for name, (fg, fb, fs) in fits.items():
        rows.append(
            f"| {name} | {fg.residual.mean():.3f} | {fb.residual.mean():.3f} "
            f"| {fs.residual.mean():.3f} | "
            f"{np.median(fg.width):.1f} | {np.median(fg.frequency):.2f} |"
        )
    return "\n".join(rows)
