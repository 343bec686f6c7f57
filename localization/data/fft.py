"""Real Fourier synthesis by FFT: the product ``h @ Q^T`` with the real Fourier basis in O(N log N).

:mod:`localization.data.spectral` draws the latent Gaussian of the data models (paper Section 2.3,
the kernel of its Eq. (2), periodised) as ``Z = (G * a) @ Q^T``: ``G`` iid N(0, 1), ``a`` the
amplitudes ``sqrt(lambda)`` and ``Q`` the fixed orthonormal real Fourier basis of
:func:`localization.data.spectral.real_fourier_basis` (per axis on grids). As a dense product that
costs O(L) per site and sample on an axis of length L. This module computes the *same* linear map
with one inverse real FFT per axis, O(L log L) per axis line, so a sample costs O(N log N) for a ring
(``N = L``) and O(N sum_a log L_a) for a grid. Because it is the same map, the FFT path gives the
same samples as the dense one up to rounding (``tests/test_spectral_fft.py``), and its covariance is
``Q diag(a**2) Q^T = C`` exactly.

Derivation (one axis of length L). The columns of ``Q`` are, for ``i = 0 .. L-1``,

- ``1 / sqrt(L)`` (frequency 0),
- ``sqrt(2/L) cos(2 pi j i / L)`` and ``sqrt(2/L) sin(2 pi j i / L)`` for ``j = 1 .. m``,
  ``m = (L - 1) // 2``, in that order (the coefficients ``c_j`` and ``s_j``),
- ``(-1)**i / sqrt(L)`` (frequency L/2) when L is even.

So, with ``h = (h_0, c_1, s_1, ..., c_m, s_m[, h_L/2])``,

    z_i = h_0 / sqrt(L) + sqrt(2/L) sum_j (c_j cos t_ij + s_j sin t_ij) [+ h_L/2 (-1)**i / sqrt(L)],

``t_ij = 2 pi j i / L``. Since ``c cos t + s sin t = Re((c - i s) e^{i t})``, this is the inverse real
DFT ``irfft(X)_i = (1/L) [X_0 + 2 Re sum_{1 <= j < L/2} X_j e^{i t_ij} + X_{L/2} (-1)**i]``
(the last term for even L only) of the half spectrum

    X_0 = sqrt(L) h_0,    X_j = sqrt(L/2) (c_j - i s_j)  (1 <= j <= m),    X_{L/2} = sqrt(L) h_L/2.

On a grid the basis is the Kronecker product of the per-axis bases (row-major flattening), so the
map is applied along each axis in turn; each axis may use the dense product or this FFT.
"""

from __future__ import annotations

import math

import jax
import jax.numpy as jnp

__all__ = ["synthesize_axis"]


def synthesize_axis(h: jax.Array, axis: int) -> jax.Array:
    """Coefficients in the real Fourier basis along ``axis`` mapped to the sites, by one inverse real FFT.

    Parameters
    ----------
    h : real array (..., L, ...) of float32 or float64; ``L = h.shape[axis] >= 2``; along ``axis`` the
        coefficients in the column order of ``spectral.real_fourier_basis(L)``.
    axis : the axis to transform.

    Returns
    -------
    Real array of the shape and dtype of ``h``: ``tensordot`` of ``h`` along ``axis`` with
    ``Q^T`` (``Q = real_fourier_basis(L)[0]``), computed in O(L log L) per line (see the module
    docstring for the half spectrum ``X`` this builds).
    """
    h = jnp.moveaxis(h, axis, -1)
    L = h.shape[-1]
    m = (L - 1) // 2
    root_l, root_half = math.sqrt(L), math.sqrt(L / 2.0)
    zero = jnp.zeros_like(h[..., :1])
    parts = [jax.lax.complex(h[..., :1] * root_l, zero)]
    if m:
        cos_c, sin_c = h[..., 1 : 2 * m : 2], h[..., 2 : 2 * m + 1 : 2]
        parts.append(jax.lax.complex(cos_c * root_half, -sin_c * root_half))
    if L % 2 == 0:
        parts.append(jax.lax.complex(h[..., L - 1 :] * root_l, zero))
    spectrum = jnp.concatenate(parts, axis=-1)  # (..., L // 2 + 1)
    z = jnp.fft.irfft(spectrum, n=L, axis=-1).astype(h.dtype)
    return jnp.moveaxis(z, -1, axis)
