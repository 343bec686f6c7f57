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
…) and every data model's ``.sample`` works unchanged with them. Needs ``jax_enable_x64`` (enabled by
``import localization``); without it the threefry bits are used.
"""

from __future__ import annotations

import math

import jax
import jax.numpy as jnp
import numpy as np
from jax import lax
from jax.extend.random import define_prng_impl, threefry_prng_impl

__all__ = ["splitmix_key", "SPLITMIX_IMPL", "normal"]

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
    if not jax.config.jax_enable_x64:  # pragma: no cover - the package enables x64 on import
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


def splitmix_key(key):
    """The SplitMix64-bits key with the same key data as ``key`` (a threefry typed key or a raw
    ``uint32[2]`` key). Keys of other implementations (e.g. rbg, 4 words) are first reduced to two
    words with threefry-independent hashing of their data (``jax.random.bits`` of the key)."""
    if jnp.issubdtype(key.dtype, jax.dtypes.prng_key):
        data = jax.random.key_data(key)
        if data.shape[-1:] != (2,):
            data = jax.random.bits(key, (2,), jnp.uint32)
    else:
        data = key
    return jax.random.wrap_key_data(data.astype(jnp.uint32), impl=SPLITMIX_IMPL)


# Giles (2010), "Approximating the erfinv function", single-precision branch coefficients
# (relative error ~ 1e-7 of erfinv in float32; central branch for w < 5, i.e. |x| < 0.9966).
_GILES_CENTRAL = (2.81022636e-08, 3.43273939e-07, -3.5233877e-06, -4.39150654e-06, 0.00021858087,
                  -0.00125372503, -0.00417768164, 0.246640727, 1.50140941)
_GILES_TAIL = (-0.000200214257, 0.000100950558, 0.00134934322, -0.00367342844, 0.00573950773,
               -0.0076224613, 0.00943887047, 1.00167406, 2.83297682)


def _horner(coeffs, x):
    p = jnp.full_like(x, coeffs[0])
    for c in coeffs[1:]:
        p = p * x + np.asarray(c, x.dtype)
    return p


def _erfinv32(x):
    w = -jnp.log((1.0 - x) * (1.0 + x))
    central = _horner(_GILES_CENTRAL, w - 2.5)
    tail = _horner(_GILES_TAIL, jnp.sqrt(w) - 3.0)
    return jnp.where(w < 5.0, central, tail) * x


def normal(key, shape, dtype=jnp.float32):
    r"""Standard normal draws, fast in float32 (inverse-CDF method, like ``jax.random.normal``).

    float32: 24 random bits per draw give a symmetric uniform :math:`u` on the midpoints
    :math:`(m + \tfrac12)2^{-23} - 1`, :math:`m = 0,\dots,2^{24}-1` (so :math:`|u| < 1` exactly and
    the law of ``u`` is symmetric), mapped by :math:`\sqrt2\,\operatorname{erf}^{-1}(u)` with Giles'
    single-precision polynomial (two branches, one ``log``; max. |difference| to ``lax.erf_inv``
    1.5e-5 at the extreme tail, |z| ≤ 5.4). On CPU this is about twice as fast as
    ``jax.random.normal``, whose XLA ``erf_inv`` dominates the cost of sampling. Other dtypes
    (float64) use ``jax.random.normal``.
    """
    dtype = jnp.dtype(dtype)
    if dtype != jnp.float32:
        return jax.random.normal(key, shape, dtype)
    bits = jax.random.bits(key, shape, jnp.uint32)
    m = (bits >> np.uint32(8)).astype(jnp.int32).astype(jnp.float32)  # exact: m < 2^24
    u = (m - np.float32(2.0**23 - 0.5)) * np.float32(2.0**-23)
    return np.float32(math.sqrt(2.0)) * _erfinv32(u)
