r"""A fast counter-based bit generator for simulations: SplitMix64 keyed by a threefry key.

Why: online SGD draws a fresh batch every step (10 000 × 40 normals per step in the paper's Fig. 3
setting). On CPU, JAX's default ``threefry2x32`` (20 rounds per pair of 32-bit words) costs about
10× more than the rest of the sampling pipeline; the XLA ``rbg``/``unsafe_rbg`` implementations are
slower still on CPU (measured in ``benchmarks/bench.py``).

What: a custom PRNG implementation (``jax.extend.random.define_prng_impl``) whose key is the same
``uint32[2]`` as threefry and whose ``seed``, ``split`` and ``fold_in`` *are* threefry's, so key
derivation (per-step ``fold_in``, ``split``) is unchanged and statistically sound. Only
``random_bits`` differs: for a key with 64-bit data ``s`` it returns the SplitMix64 stream
``mix(s + i·γ)``, ``i = 1, 2, …`` (Steele, Lea & Flood 2014; γ the golden-ratio increment; ``mix``
the variant-13 finaliser), which passes BigCrush. Different keys give different, pseudo-random
64-bit starting points, so two draws overlap only if their seeds are within ``count·γ`` of each other
modulo ``2^64`` (probability ~ ``count / 2^63`` per pair).

Keys are typed keys (``jax.random.key``-style), so every ``jax.random`` function (normal, bernoulli,
…) and every data model's ``.sample`` works unchanged with them. Needs ``jax_enable_x64`` (turned on by
``localization.enable_float64()``); without it the threefry bits are used.
"""

from __future__ import annotations

import math
from collections.abc import Sequence

import jax
import jax.numpy as jnp
import numpy as np
from jax import lax
from jax.extend.random import define_prng_impl, threefry_prng_impl
from jax.typing import ArrayLike, DTypeLike

__all__ = ["splitmix_key", "SPLITMIX_IMPL", "normal", "normal_from_bits", "flat_normal", "gamma"]

_GAMMA = np.uint64(0x9E3779B97F4A7C15)
_C1 = np.uint64(0xBF58476D1CE4E5B9)
_C2 = np.uint64(0x94D049BB133111EB)


def _splitmix64(key_data, count: int):
    """SplitMix64 outputs 1..count for seed = 64-bit concatenation of the two key words (uint64[count])."""
    k = key_data.astype(jnp.uint64)
    seed = (k[0] << np.uint64(32)) | k[1]
    z = seed + (lax.iota(jnp.uint64, count) + np.uint64(1)) * _GAMMA
    z = (z ^ (z >> np.uint64(30))) * _C1
    z = (z ^ (z >> np.uint64(27))) * _C2
    return z ^ (z >> np.uint64(31))


def _random_bits(key_data, bit_width: int, shape):
    if not jax.config.jax_enable_x64:  # pragma: no cover - no uint64 without localization.enable_float64()
        return threefry_prng_impl.random_bits(key_data, bit_width, shape)
    shape = tuple(int(s) for s in shape)
    size = int(np.prod(shape, dtype=np.int64))
    if bit_width == 64:
        return _splitmix64(key_data, size).reshape(shape)
    words = _splitmix64(key_data, (size + 1) // 2)
    bits32 = lax.bitcast_convert_type(words, jnp.uint32).reshape(-1)[:size].reshape(shape)
    if bit_width == 32:
        return bits32
    dtype = {8: jnp.uint8, 16: jnp.uint16}[bit_width]
    return lax.convert_element_type(bits32 >> np.uint32(32 - bit_width), dtype)


SPLITMIX_IMPL = define_prng_impl(
    key_shape=(2,),
    seed=threefry_prng_impl.seed,
    split=threefry_prng_impl.split,
    random_bits=_random_bits,
    fold_in=threefry_prng_impl.fold_in,
    name="splitmix64_threefry_keys",
    tag="smx",
)


def splitmix_key(key: jax.Array) -> jax.Array:
    """Return the SplitMix64-bits key with the same key data as ``key``.

    ``key`` is a threefry typed key or a raw ``uint32[2]`` key. Keys of other implementations (e.g.
    rbg, 4 words) are first reduced to two words with threefry-independent hashing of their data
    (``jax.random.bits`` of the key).

    Parameters
    ----------
    key : jax.Array
        A JAX PRNG key.

    Returns
    -------
    jax.Array
        A typed key of :data:`SPLITMIX_IMPL`.
    """
    if jnp.issubdtype(key.dtype, jax.dtypes.prng_key):
        data = jax.random.key_data(key)
        if data.shape[-1:] != (2,):
            data = jax.random.bits(key, (2,), jnp.uint32)
    else:
        data = key
    return jax.random.wrap_key_data(data.astype(jnp.uint32), impl=SPLITMIX_IMPL)


# cos(pi t / 2) = sum_n (-1)^n (pi/2)^(2n) t^(2n) / (2n)!, t in [0, 1]: the Taylor series to t^12
# has remainder < (pi/2)^14 / 14! = 6.4e-9, below float32 resolution.
_COS_HALF_PI = tuple((-1) ** n * (math.pi / 2) ** (2 * n) / math.factorial(2 * n) for n in range(7))
_BITS = 23  # per uniform: (2m + 1) 2^-24 with m < 2^23 is exact in float32


def _horner(coeffs, x):
    """sum_n coeffs[n] x^n (float32 Horner, highest power first)."""
    p = jnp.full_like(x, np.float32(coeffs[-1]))
    for c in coeffs[-2::-1]:
        p = p * x + np.float32(c)
    return p


def _midpoint(m):
    """(2m + 1) 2^-24 for integer m < 2^23: the midpoints of 2^23 equal cells of (0, 1), exact in float32."""
    return (m.astype(jnp.float32) * np.float32(2.0) + np.float32(1.0)) * np.float32(2.0**-24)


# One normal per word, although Box-Muller gives a (cos, sin) pair: on CPU, XLA fuses a single
# element-wise generator into one vectorised loop, while assembling two halves (concatenate or
# interleave) made it recompute the word or lose vectorisation (1.5-4x slower sampling, measured).
def normal_from_bits(words: jax.Array) -> jax.Array:
    r"""Return standard normals from 64-bit words (one normal per word; float32): Box–Muller on one angle.

    With :math:`U, T` uniform on (0, 1) and a sign :math:`S = \pm1`, all independent,
    :math:`Z = S\sqrt{-2\log U}\,\cos(\pi T/2)` is exactly N(0, 1) (Box–Muller's
    :math:`R\cos\Theta` with :math:`\Theta` uniform: :math:`|\cos\Theta|` has the law of
    :math:`\cos(\pi T/2)` and its sign is independent of it). Word bits 41–63 give :math:`U`,
    bits 18–40 give :math:`T` (each the midpoint of one of :math:`2^{23}` equal cells), bit 0 gives
    :math:`S`. ``words``: uint64 array, any shape; returns float32 of the same shape.

    Parameters
    ----------
    words : jax.Array
        uint64 random words, any shape.

    Returns
    -------
    jax.Array
        float32 standard normals, the shape of ``words``.
    """
    m_u = (words >> np.uint64(64 - _BITS)).astype(jnp.int32)
    m_t = ((words >> np.uint64(64 - 2 * _BITS)) & np.uint64(2**_BITS - 1)).astype(jnp.int32)
    negative = (words & np.uint64(1)) == np.uint64(1)
    r = jnp.sqrt(np.float32(-2.0) * jnp.log(_midpoint(m_u)))
    t = _midpoint(m_t)
    c = _horner(_COS_HALF_PI, t * t)
    return jnp.where(negative, -r, r) * c


def flat_normal(key: jax.Array, shape: Sequence[int], dtype: DTypeLike = jnp.float64) -> jax.Array:
    """Return ``jax.random.normal(key, shape, dtype)``, drawn as one flat vector and reshaped.

    The same numbers (the random bits of a shape are generated flat and reshaped, for threefry and for
    :data:`SPLITMIX_IMPL`), but XLA:CPU compiles a flat draw about twice as fast as a 2-D one (and a
    4-D one pathologically slowly); every new shape is a new compilation.

    Parameters
    ----------
    key : jax.Array
        A JAX PRNG key.
    shape : Sequence[int]
        Shape of the result.
    dtype : DTypeLike
        Floating dtype.

    Returns
    -------
    jax.Array
        Standard normal draws of ``shape`` and ``dtype``.
    """
    shape = tuple(shape)
    flat = jax.random.normal(key, (math.prod(shape),), dtype)
    if isinstance(flat, jax.core.Tracer):
        return flat.reshape(shape)
    # a concrete draw is reshaped on the host: an eager reshape would be one more compilation per shape
    return jax.device_put(np.asarray(flat).reshape(shape))


def normal(key: jax.Array, shape: Sequence[int], dtype: DTypeLike = jnp.float32) -> jax.Array:
    r"""Return standard normal draws, fast in float32 (one 64-bit random word per draw).

    float32: :func:`normal_from_bits` of ``jax.random.bits(key, shape, uint64)`` — Box–Muller with
    the angle folded to :math:`[0, \pi/2]`, so each draw needs one ``log``, one ``sqrt`` and a
    degree-12 polynomial, with no branches (on CPU 2.6× faster than the inverse-CDF transform of
    ``jax.random.normal``, whose XLA ``erf_inv`` dominates its cost, and it vectorises with the
    following matrix product). The law is symmetric, supported on :math:`|z| \le \sqrt{48\log 2}
    = 5.77`; its distance to N(0, 1) is set by the :math:`2^{-23}` grids of :math:`U` and
    :math:`T` (Kolmogorov distance at most :math:`2^{-23} \approx 1.2\times10^{-7}` for the exact
    formula, checked in ``tests/test_prng.py``) and by float32 rounding (at most 5e-7 absolute over
    10^6 words). Needs ``jax_enable_x64`` (``localization.enable_float64()``); without it,
    and for other dtypes (float64), ``jax.random.normal``.

    Parameters
    ----------
    key : jax.Array
        A JAX PRNG key.
    shape : Sequence[int]
        Shape of the result.
    dtype : DTypeLike
        Floating dtype (float32: the fast path).

    Returns
    -------
    jax.Array
        Standard normal draws of ``shape`` and ``dtype``.
    """
    dtype = jnp.dtype(dtype)
    if dtype != jnp.float32 or not jax.config.jax_enable_x64:
        return flat_normal(key, shape, dtype)
    return normal_from_bits(jax.random.bits(key, shape, jnp.uint64))


def gamma(key: jax.Array, alpha: ArrayLike, shape: Sequence[int], dtype: DTypeLike = jnp.float32) -> jax.Array:
    r"""Return Gamma(α, 1) draws by Marsaglia and Tsang's method (ACM TOMS 26(3), 2000), vectorised.

    For α ≥ 1 with :math:`d = \alpha - 1/3`, :math:`c = 1/\sqrt{9d}`: propose :math:`x \sim N(0, 1)`,
    :math:`v = (1 + cx)^3`, accept :math:`dv` when :math:`v > 0` and
    :math:`\log U < x^2/2 + d - dv + d\log v`; for α < 1, :math:`G_{\alpha+1}U^{1/\alpha}`. The law is
    exact: every element keeps proposing until it is accepted, but all elements propose together
    (one ``lax.while_loop`` over the whole array, a few rounds since each proposal is accepted with
    probability above 0.95), where ``jax.random.gamma`` runs one scalar loop per element — on CPU about
    7× slower at 10 000 draws. ``alpha`` may be traced (a Student-t ν inside ``train``), a scalar or
    an array broadcasting to ``shape``; a concrete ``alpha`` must be positive and finite.

    Parameters
    ----------
    key : jax.Array
        A JAX PRNG key.
    alpha : ArrayLike
        Shape parameter α > 0, a scalar or an array broadcasting to ``shape`` (may be traced).
    shape : Sequence[int]
        Shape of the result.
    dtype : DTypeLike
        Floating dtype.

    Returns
    -------
    jax.Array
        Gamma(α, 1) draws of ``shape`` and ``dtype``.
    """
    if not isinstance(alpha, jax.core.Tracer):
        a = np.asarray(alpha, dtype=np.float64)
        if not np.all(np.isfinite(a)) or np.any(a <= 0):
            raise ValueError(f"alpha must be positive and finite, got {alpha!r}")
    dtype = jnp.dtype(dtype)
    if not jnp.issubdtype(dtype, jnp.floating):
        raise TypeError(f"dtype must be a floating dtype, got {dtype}")
    shape = tuple(shape)
    alpha = jnp.broadcast_to(jnp.asarray(alpha, dtype), shape)
    boost = alpha < 1
    d = jnp.where(boost, alpha + 1, alpha) - 1 / 3
    c = 1 / jnp.sqrt(9 * d)
    key, k_boost = jax.random.split(key)

    def propose(state):
        # One state array: 0 = still proposing. A separate "accepted" mask computed from the same test
        # can disagree with the value's own select when XLA evaluates the test in two fusions (seen:
        # accepted elements left at 0, hence infinite Student-t draws), so acceptance is read off the value.
        key, draws = state
        key, k_x, k_u = jax.random.split(key, 3)
        x = normal(k_x, shape, dtype)
        u = 1 - jax.random.uniform(k_u, shape, dtype)  # in (0, 1]
        v = (1 + c * x) ** 3
        positive = v > 0
        ok = positive & (jnp.log(u) < 0.5 * x * x + d - d * v + d * jnp.log(jnp.where(positive, v, 1)))
        return key, jnp.where((draws == 0) & ok, d * v, draws)

    _, draws = jax.lax.while_loop(lambda s: jnp.any(s[1] == 0), propose, (key, jnp.zeros(shape, dtype)))
    u = 1 - jax.random.uniform(k_boost, shape, dtype)
    return jnp.where(boost, draws * u ** (1 / alpha), draws)
