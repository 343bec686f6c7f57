"""Covariance of the underlying Gaussian: the periodised squared-exponential kernel.

The paper (Section 2.3) and its code use the *wrapped* kernel ``exp(-d**2 / xi**2)`` with the
periodic distance ``d = min(|i-j|, L-|i-j|)``. That matrix is not positive semi-definite once
``xi`` is comparable to ``L``: at L=40 its smallest eigenvalue is +2.4e-9 at xi=3 (in exact
arithmetic; float32 eigensolvers report about -5e-8), turns negative between xi=3.5 and 3.75, and is
-0.43 at xi=15. Square roots of it are then not defined. We use instead the *periodised* kernel

    k(d) = S(d) / S(0),     S(d) = sum_{m in Z} exp(-(d + m L)**2 / xi**2),

the covariance of a stationary Gaussian process on the circle of circumference ``L``. By Poisson
summation its discrete Fourier transform is a sum of positive Gaussians,

    lambda_j = L * G_j / sum_l G_l,     G_j = sum_{m in Z} exp(-pi**2 xi**2 (j/L + m)**2),

so every eigenvalue is >= 0 exactly (and sum_j lambda_j = L, i.e. unit diagonal). For xi << L it
equals the min-distance kernel up to terms of order exp(-(L/2)**2 / xi**2).

Grids (``n`` a tuple) use the product kernel over axes: the covariance is the Kronecker product of
the per-axis circulants, in row-major (C) order of the flattened grid.

Sampling uses the spectral form of the root. Every symmetric circulant is diagonal in one fixed real
orthonormal basis ``Q`` (constant, cosine/sine pairs, alternating column), ``C = Q diag(lambda) Q^T``,
so ``Z = (G * sqrt(lambda)) @ Q^T`` with ``G`` iid N(0, 1) has covariance ``C`` exactly. The basis does
not depend on ``xi``: two length-scales share one matrix product, and only the per-frequency
amplitudes ``sqrt(lambda)`` (:func:`spectral_amplitudes`) change.

The product with ``Q`` (:func:`to_sites`) has two implementations of the same linear map, chosen by
``method`` (:data:`METHODS`): ``"dense"``, matrix products with the per-axis basis (O(L) per site and
sample on an axis of length L: O(N**2) on a ring), and ``"fft"``, one inverse real FFT per axis
(:func:`synthesize_axis`; O(N log N) on a ring). ``"auto"`` uses the FFT on the axes of length
``>= FFT_MIN_LENGTH`` (the crossover measured by ``benchmarks/data_sampling.py --methods``) and the
dense product on shorter ones, so samples at the sizes the chapters use are the dense ones bit for bit.
The two paths agree to rounding (``tests/test_spectral_fft.py``). The choice is an argument: ``method`` of
a data model's or a task's ``sample`` (default ``"auto"``), passed down to :func:`to_sites`.
"""

from __future__ import annotations

import functools
import math
from typing import Any

import jax
import jax.numpy as jnp
import numpy as np
from jax.typing import DTypeLike

from localization import prng
from localization import validation as v

__all__ = [
    # public API (validated): re-exported by localization.data
    "covariance",
    "covariance_sqrt",
    "fourier_basis",
    "spectral_amplitudes",
    "min_distance_covariance",
    # public and validated, used as spectral.circulant_eigenvalues: the one home of circulant eigenvalues
    "circulant_eigenvalues",
    # building blocks for the data models (arguments checked by their callers)
    "kernel_row",
    "eigenvalues",
    "circulant",
    "covariance_matrix",
    "sqrt_matrix",
    "real_fourier_basis",
    "grid_amplitudes",
    "fourier_matrix",
    "min_distance_kernel",
    "standard_normals",
    "METHODS",
    "FFT_MIN_LENGTH",
    "check_method",
    "axis_methods",
    "synthesize_axis",
    "to_sites",
    "correlated_normals",
    "unit_sphere_rows",
]

# exp(-x) < 1e-300 for x > 690: terms beyond this are exactly zero in float64.
_CUTOFF = 745.0


@functools.lru_cache(maxsize=512)
def kernel_row(xi: float, L: int) -> np.ndarray:
    """First row ``k(0..L-1)`` of the periodised kernel (direct sum over images), float64."""
    d = np.arange(L, dtype=np.float64)
    # images with (d + mL)^2 / xi^2 < CUTOFF; |m| <= ceil(xi * sqrt(CUTOFF) / L) + 1
    m_max = int(math.ceil(xi * math.sqrt(_CUTOFF) / L)) + 1
    m = np.arange(-m_max, m_max + 1, dtype=np.float64)
    # factor out the largest term of each column for accuracy: work with (d+mL)^2 - d_min^2
    dm = d[:, None] + m[None, :] * L
    expo = -(dm**2) / xi**2
    s = np.exp(expo).sum(axis=1)
    row = s / s[0]
    row = 0.5 * (row + np.roll(row[::-1], 1))  # exact symmetry row[d] = row[L - d]
    row[0] = 1.0
    row.setflags(write=False)
    return row


@functools.lru_cache(maxsize=512)
def eigenvalues(xi: float, L: int) -> np.ndarray:
    """Eigenvalues ``lambda_j`` (j = 0..L-1, DFT order) of the periodised kernel, all >= 0.

    Computed from the Poisson-dual series, so they are positive by construction (tiny ones may
    underflow to exactly 0). They sum to ``L``.
    """
    j = np.arange(L, dtype=np.float64)
    nu = np.minimum(j, L - j) / L  # in [0, 1/2]; G is even and 1-periodic in nu
    m_max = int(math.ceil(math.sqrt(_CUTOFF) / (math.pi * xi))) + 1
    m = np.arange(-m_max, m_max + 1, dtype=np.float64)
    expo = -((math.pi * xi) ** 2) * (nu[:, None] + m[None, :]) ** 2
    # normalise by the largest exponent (nu = 0, m = 0 term is exponent 0) -> no overflow
    g = np.exp(expo).sum(axis=1)
    lam = L * g / g.sum()
    lam.setflags(write=False)
    return lam


def circulant(row: np.ndarray) -> np.ndarray:
    """Symmetric circulant matrix with first row ``row`` (row[d] = row[L-d] assumed)."""
    L = row.shape[0]
    idx = (np.arange(L)[None, :] - np.arange(L)[:, None]) % L
    return row[idx]


@functools.lru_cache(maxsize=256)
def _axis_sqrt(xi: float, L: int) -> np.ndarray:
    lam = np.clip(eigenvalues(xi, L), 0.0, None)
    row = np.fft.ifft(np.sqrt(lam)).real
    row = 0.5 * (row + np.roll(row[::-1], 1))  # enforce exact symmetry row[d] = row[L-d]
    out = circulant(row)
    out.setflags(write=False)
    return out


def axis_sqrt(xi: float, L: int) -> np.ndarray:
    """Symmetric square root of the (L, L) periodised-kernel circulant."""
    return _axis_sqrt(float(xi), int(L))


@functools.lru_cache(maxsize=64)
def _real_fourier_basis(L: int) -> tuple[np.ndarray, np.ndarray]:
    i = np.arange(L, dtype=np.float64)
    cols, freqs = [np.full(L, 1.0 / math.sqrt(L))], [0]
    for j in range(1, (L + 1) // 2):
        angle = 2.0 * math.pi * j * i / L
        cols += [math.sqrt(2.0 / L) * np.cos(angle), math.sqrt(2.0 / L) * np.sin(angle)]
        freqs += [j, j]
    if L % 2 == 0:
        cols.append(np.cos(math.pi * i) / math.sqrt(L))  # (-1)^i, frequency L/2
        freqs.append(L // 2)
    Q, freq = np.stack(cols, axis=1), np.asarray(freqs)
    Q.setflags(write=False)
    freq.setflags(write=False)
    return Q, freq


def real_fourier_basis(L: int) -> tuple[np.ndarray, np.ndarray]:
    """Return ``(Q, freq)``: the real Fourier basis of size L and each column's DFT frequency.

    Q is an orthonormal (L, L) basis of real eigenvectors shared by every symmetric circulant of size
    L; ``freq`` the DFT frequency (0..L//2) of each column.

    Columns: the constant, then ``sqrt(2/L) cos(2 pi j i / L)``, ``sqrt(2/L) sin(2 pi j i / L)`` for
    ``j = 1 .. ceil(L/2) - 1``, then ``(-1)^i / sqrt(L)`` if L is even. A symmetric circulant with
    DFT eigenvalues ``lambda`` (``lambda_j = lambda_{L-j}``) equals ``Q diag(lambda[freq]) Q^T``.
    """
    return _real_fourier_basis(int(L))


@functools.lru_cache(maxsize=512)
def _spectral_amplitudes(xi: float, shape: tuple[int, ...]) -> np.ndarray:
    out = np.ones(())
    for L in shape:
        _, freq = real_fourier_basis(L)
        out = np.multiply.outer(out, np.sqrt(eigenvalues(xi, L))[freq])
    out = out.reshape(-1)
    out.setflags(write=False)
    return out


def grid_amplitudes(xi: float, shape: tuple[int, ...]) -> np.ndarray:
    """Return the (N,) amplitudes ``sqrt(lambda)`` of the covariance in the real Fourier basis.

    The basis is per axis (Kronecker), flattened in row-major order: ``covariance_matrix(xi, shape)`` equals
    ``Qs diag(a**2) Qs^T`` with ``Qs`` the Kronecker product of the per-axis bases.
    """
    return _spectral_amplitudes(float(xi), tuple(int(L) for L in shape))


def _kron_over_axes(shape: tuple[int, ...], axis_matrix) -> np.ndarray:
    """(N, N) Kronecker product over the grid axes of ``axis_matrix(L)`` (row-major flattening)."""
    out = np.ones((1, 1))
    for L in shape:
        out = np.kron(out, axis_matrix(int(L)))
    return out


def covariance_matrix(xi: float, shape: tuple[int, ...]) -> np.ndarray:
    """(N, N) covariance, N = prod(shape): Kronecker product of per-axis circulants."""
    return _kron_over_axes(shape, lambda L: circulant(np.asarray(kernel_row(float(xi), L))))


def sqrt_matrix(xi: float, shape: tuple[int, ...]) -> np.ndarray:
    """(N, N) symmetric square root: Kronecker product of per-axis circulant roots."""
    return _kron_over_axes(shape, lambda L: axis_sqrt(xi, L))


def fourier_matrix(shape: tuple[int, ...]) -> np.ndarray:
    """(N, N) real Fourier basis of the grid: Kronecker product of the per-axis bases."""
    return _kron_over_axes(shape, lambda L: real_fourier_basis(L)[0])


def min_distance_kernel(xi: float, shape: tuple[int, ...]) -> np.ndarray:
    """Return the paper's wrapped kernel exp(-d^2/xi^2), d the periodic (min) distance; NOT PSD in general."""

    def wrapped(L):
        d = np.arange(L)
        d = np.minimum(d, L - d).astype(np.float64)
        return circulant(np.exp(-(d**2) / xi**2))

    return _kron_over_axes(shape, wrapped)


# --------------------------------------------------------------------------------------------
# the public, validated API
# --------------------------------------------------------------------------------------------
def covariance(xi: float, n: int | tuple[int, ...]) -> np.ndarray:
    """Return the (N, N) float64 covariance of the underlying Gaussian (unit diagonal, PSD for every xi > 0).

    Periodised kernel k(d) = sum_m exp(-(d + mL)^2/xi^2) / sum_m exp(-(mL)^2/xi^2) (circulant;
    Kronecker product over axes for a grid). Replaces the paper's wrapped kernel of Section 2.3,
    which is not PSD for xi comparable to L.

    Parameters
    ----------
    xi, n : float, int or tuple[int, ...]
        Length-scale (> 0); input size (a ring, or a periodic grid shape), N = prod(n).

    Returns
    -------
    np.ndarray
        (N, N) float64.
    """
    return covariance_matrix(v.positive("xi", xi), v.shape("n", n))


def covariance_sqrt(xi: float, n: int | tuple[int, ...]) -> np.ndarray:
    """Return the (N, N) float64 symmetric square root R of ``covariance(xi, n)`` (R @ R = C; eigenvalues clipped at 0).

    Parameters
    ----------
    xi, n : float, int or tuple[int, ...]
        Length-scale (> 0); input size (a ring, or a periodic grid shape), N = prod(n).

    Returns
    -------
    np.ndarray
        (N, N) float64.
    """
    return sqrt_matrix(v.positive("xi", xi), v.shape("n", n))


def fourier_basis(n: int | tuple[int, ...]) -> np.ndarray:
    """Return the (N, N) float64 orthonormal real Fourier basis Q that diagonalises every covariance here.

    Columns: the constant, cosine/sine pairs, the alternating column (Kronecker product over axes
    for a grid): ``covariance(xi, n) == Q @ diag(spectral_amplitudes(xi, n)**2) @ Q.T``.

    Parameters
    ----------
    n : int or tuple[int, ...]
        Input size; N = prod(n).

    Returns
    -------
    np.ndarray
        (N, N) float64 orthonormal Q.
    """
    return fourier_matrix(v.shape("n", n))


def spectral_amplitudes(xi: float, n: int | tuple[int, ...]) -> np.ndarray:
    """Return the (N,) float64 amplitudes ``a >= 0`` of the latent Gaussian.

    The samplers draw the latent Gaussian as
    ``(G * a) @ fourier_basis(n).T`` with G iid N(0, 1), whose covariance is ``covariance(xi, n)``.

    Parameters
    ----------
    xi, n : float, int or tuple[int, ...]
        Length-scale (> 0); input size (a ring, or a periodic grid shape), N = prod(n).

    Returns
    -------
    np.ndarray
        (N,) float64 amplitudes, ordered as the columns of :func:`fourier_basis`.
    """
    return np.array(grid_amplitudes(v.positive("xi", xi), v.shape("n", n)))


def min_distance_covariance(xi: float, n: int | tuple[int, ...]) -> np.ndarray:
    """Return the paper's wrapped kernel ``exp(-d**2 / xi**2)``, ``d = min(|i-j|, L-|i-j|)``; NOT PSD in general.

    Parameters
    ----------
    xi, n : float, int or tuple[int, ...]
        Length-scale (> 0); input size (a ring, or a periodic grid shape), N = prod(n).

    Returns
    -------
    np.ndarray
        (N, N) float64.
    """
    return min_distance_kernel(v.positive("xi", xi), v.shape("n", n))


def circulant_eigenvalues(row: Any) -> np.ndarray:
    r"""Return the eigenvalues of the symmetric circulant with first row ``row``, in DFT order.

    The circulant :math:`C_{ij}=\mathrm{row}[(j-i)\bmod L]` has the eigenvalues
    :math:`\lambda_j=\sum_d \mathrm{row}[d]\,e^{-2\pi\mathrm i jd/L}` (the DFT of its first row,
    j = 0..L-1), real when the row is symmetric (``row[d] = row[L - d]``); :func:`real_fourier_basis`
    orders them by column as ``lambda[freq]``. The one home of circulant eigenvalues in the library
    (``localization.theory.mechanism.circulant_spectra`` takes its eigenvalues from here).

    Parameters
    ----------
    row : array_like
        (L,) real, finite first row, L >= 1, symmetric to 1e-9 of its largest entry.

    Returns
    -------
    np.ndarray
        (L,) float64, the real parts of ``numpy.fft.fft(row)``.
    """
    row = np.asarray(v.float_array("row", row), dtype=np.float64)
    if row.ndim != 1 or row.shape[0] < 1:
        raise ValueError(f"row must be a non-empty 1-D array, got shape {row.shape}")
    if not np.all(np.isfinite(row)):
        raise ValueError("row must be finite")
    asymmetry = np.max(np.abs(row - np.roll(row[::-1], 1)))
    if asymmetry > 1e-9 * max(np.max(np.abs(row)), 1e-300):
        raise ValueError(
            f"row must be symmetric (row[d] = row[L - d], else the eigenvalues are complex), "
            f"got largest asymmetry {asymmetry:.3g}"
        )
    return np.fft.fft(row).real


# --------------------------------------------------------------------------------------------
# sampling the latent Gaussian (traced; shapes static)
# --------------------------------------------------------------------------------------------
def standard_normals(key: jax.Array, shape: tuple[int, ...], dtype: DTypeLike) -> jax.Array:
    """Iid N(0, 1) draws for the Gaussian(-copula) samplers.

    float32: ``localization.prng.normal`` (Box–Muller on one angle folded to [0, pi/2], one 64-bit
    SplitMix64/threefry word per draw; 2.6x faster on CPU than ``jax.random.normal``, whose XLA
    ``erf_inv`` dominates the sampling cost). Its law is symmetric with support ``|z| <= 5.77`` and
    Kolmogorov distance to N(0, 1) at most 2^-23 before float32 rounding (``max |z - ideal|`` 5e-7);
    see ``tests/test_prng.py``. Other dtypes (float64): ``jax.random.normal``.
    """
    return prng.normal(key, shape, dtype)


#: Implementations of the map to the sites: ``"auto"`` picks per axis, ``"dense"`` multiplies by the
#: basis, ``"fft"`` uses one inverse real FFT per axis (:func:`synthesize_axis`).
METHODS = ("auto", "dense", "fft")

#: ``"auto"`` uses the FFT on axes at least this long. Measured on this book's 2-core CPU
#: (``benchmarks/data_sampling.py --methods``, batch 1000, float32; the table on the reproducibility
#: page): on a ring the two are close at N = 256 (dense/FFT cost ratio 0.70 on a quiet machine, 0.97-1.46
#: under load) and the FFT wins from 512 on (ratio 1.2-2.1 at 512, about 4.5 at 4096); on grids the
#: dense product is per axis (O(N sum L_a)) and faster than the FFT up to 64 x 64. Hence the FFT from
#: 257 sites per axis; all sizes the chapters sample (<= 128 per axis) stay the dense ones bit for bit.
FFT_MIN_LENGTH = 257


def check_method(name: str, value: Any) -> str:
    """``value`` if it is one of :data:`METHODS`, else ``ValueError`` naming ``name``.

    Parameters
    ----------
    name : str
        The parameter's name, for the message.
    value : Any
        The sampling method asked for.

    Returns
    -------
    str
        ``value``, one of ``"auto"``, ``"dense"``, ``"fft"``.
    """
    if isinstance(value, str) and value in METHODS:
        return value
    raise ValueError(f"{name} must be one of {METHODS}, got {value!r}")


def axis_methods(shape: tuple[int, ...], method: str = "auto") -> tuple[str, ...]:
    """Per axis of ``shape``, ``"dense"`` or ``"fft"``: what ``method`` (:data:`METHODS`) means there.

    ``"auto"`` is ``"fft"`` iff the axis has length >= :data:`FFT_MIN_LENGTH`.

    Parameters
    ----------
    shape : tuple of int
        The grid's shape (one entry on a ring).
    method : str
        ``"auto"`` (default), ``"dense"`` or ``"fft"``.

    Returns
    -------
    tuple of str
        One of ``"dense"``, ``"fft"`` per axis.
    """
    method = check_method("method", method)
    if method != "auto":
        return (method,) * len(shape)
    return tuple("fft" if L >= FFT_MIN_LENGTH else "dense" for L in shape)


def synthesize_axis(h: jax.Array, axis: int) -> jax.Array:
    """Coefficients in the real Fourier basis along ``axis`` mapped to the sites by one inverse real FFT.

    The same linear map as ``tensordot(h, Q.T, axes=([axis], [0]))`` with
    ``Q = real_fourier_basis(L)[0]`` (moved back to ``axis``), in O(L log L) per line instead of O(L**2).

    Parameters
    ----------
    h : (..., L, ...) float32 or float64 array, ``L = h.shape[axis] >= 2``: along ``axis``, the
        coefficients in the column order of :func:`real_fourier_basis`.
    axis : the axis to transform.

    Returns
    -------
    Real array of the shape and dtype of ``h``.

    Notes
    -----
    The columns of ``Q`` are ``1/sqrt(L)``; ``sqrt(2/L) cos(2 pi j i/L)`` and ``sqrt(2/L) sin(2 pi j i/L)``
    for ``j = 1 .. m``, ``m = (L - 1) // 2`` (coefficients ``c_j``, ``s_j``); and ``(-1)**i / sqrt(L)``
    if L is even (coefficient ``h_e``). With ``t = 2 pi j i / L`` and
    ``c cos t + s sin t = Re((c - i s) e^{i t})``, the site values

        z_i = h_0/sqrt(L) + sqrt(2/L) sum_j (c_j cos t + s_j sin t) [+ h_e (-1)**i / sqrt(L)]

    are the inverse real DFT ``irfft(X)_i = (1/L) [X_0 + 2 Re sum_{0 < j < L/2} X_j e^{i t} + X_{L/2} (-1)**i]``
    (last term for even L) of the half spectrum

        X_0 = sqrt(L) h_0,   X_j = sqrt(L/2) (c_j - i s_j) for 1 <= j <= m,   X_{L/2} = sqrt(L) h_e.

    Hence the FFT path gives the dense path's samples up to rounding and its covariance is
    ``Q diag(a**2) Q^T = C`` exactly (checked by enumeration in ``tests/test_spectral_fft.py``).
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


def to_sites(h: jax.Array, shape: tuple[int, ...], method: str = "auto") -> jax.Array:
    """Map rows of ``h`` (num, N), coefficients in the real Fourier basis, to the sites: h @ Q^T.

    Per axis on grids. With h = G * amplitudes, G iid N(0, 1), the rows have the covariance.

    ``method`` (:data:`METHODS`; default ``"auto"``, see :func:`axis_methods`) picks per
    axis the dense product with the basis or the inverse real FFT of :func:`synthesize_axis`,
    which computes the same map in O(L log L) per line instead of O(L**2).

    Parameters
    ----------
    h, shape, method : jax.Array, tuple[int, ...], str
        (num, N) coefficients; the input shape (N = prod(shape)); one of :data:`METHODS`.

    Returns
    -------
    jax.Array
        (num, N) values at the sites, in the dtype of ``h``.
    """
    num, N = h.shape
    methods = axis_methods(shape, method)
    if len(shape) == 1 and methods[0] == "dense":
        return h @ jnp.asarray(real_fourier_basis(shape[0])[0].T, h.dtype)
    z = h.reshape((num,) + shape)
    for ax, (L, how) in enumerate(zip(shape, methods, strict=True)):
        if how == "fft":
            z = synthesize_axis(z, ax + 1)
            continue
        QT = jnp.asarray(real_fourier_basis(L)[0].T, h.dtype)
        z = jnp.moveaxis(jnp.tensordot(z, QT, axes=([ax + 1], [0])), -1, ax + 1)
    return z.reshape(num, N)


def correlated_normals(
    key: jax.Array, num: int, shape: tuple[int, ...], xi: float, dtype: DTypeLike, method: str = "auto"
) -> jax.Array:
    """Return (num, N) Gaussian rows with covariance ``covariance(xi, shape)``: ``(G * a) @ Q^T``.

    In law the same as ``G @ R`` with the symmetric root R (an orthogonal map of iid normals is iid
    normal), at the cost of one map to the sites (:func:`to_sites` with ``method``).
    """
    g = standard_normals(key, (num, math.prod(shape)), dtype)
    return to_sites(g * jnp.asarray(grid_amplitudes(xi, shape), dtype), shape, method)


def unit_sphere_rows(
    key: jax.Array, num: int, shape: tuple[int, ...], xi: float, dtype: DTypeLike, method: str = "auto"
) -> jax.Array:
    """Return (num, N) rows ``sqrt(N) G/|G|`` mapped like ``correlated_normals``: elliptical, covariance C."""
    N = math.prod(shape)
    g = prng.flat_normal(key, (num, N), dtype)
    g = g * (math.sqrt(N) / jnp.linalg.norm(g, axis=1, keepdims=True))
    return to_sites(g * jnp.asarray(grid_amplitudes(xi, shape), dtype), shape, method)
