"""The periodic 1-D ferromagnetic Ising chain (paper Eq. (2)).

An exact sampler, exact correlations, and the short Metropolis chains of the paper's code (a contrast, not a sampler).

:class:`Ising` samples the chain exactly through its transfer matrix; :func:`ising_correlation` is
E[x_0 x_d] in closed form. :func:`metropolis_ising` reproduces the procedure of the paper's public
code (below), so the book can *measure* its bias against the exact sampler.

Short single-spin Metropolis chains for the periodic 1-D Ising model (a *contrast*, not a sampler).

The paper (Sec. 2.3) says its Ising data come from a Gibbs sampler; its public code
(``leonlufkin/Localization`` at commit 5ebb565, ``localization/datasets/ising.py`` L32-85, L106, and
``figures/fig3a.py`` L39) runs single-spin Metropolis chains from a uniform random start, with no
burn-in, and uses the last state of each chain as one example: 1000 proposals by default, 2000 for
the Fig. 3 training data. Such a chain has not reached the Ising
law, so its correlations are biased towards zero. This module reproduces that procedure so the book
can *measure* the bias against the exact sampler :class:`localization.data.Ising`; do not use it to
generate training data.

Target law (ferromagnetic for ``J > 0``; periodic boundary ``x_{n} = x_0``)::

    p(x) ∝ exp(+J Σ_i x_i x_{i+1}),   x ∈ {-1, +1}^n .

One proposal picks a site ``s`` uniformly, proposes ``x_s → -x_s`` and accepts with probability
``min(1, exp(-2 J x_s (x_{s-1} + x_{s+1})))`` (the Metropolis ratio of the law above).
"""

from __future__ import annotations

import math
from functools import partial

import jax
import jax.numpy as jnp
import numpy as np
from jax.typing import ArrayLike, DTypeLike

from localization import validation as v
from localization.data.base import DataModel, concrete, family_parameter
from localization.data.marginals import RademacherMarginal
from localization.pytree import pytree_dataclass

__all__ = ["Ising", "ising_correlation", "metropolis_ising"]


def ising_correlation(J: float, n: int, d: ArrayLike) -> np.ndarray:
    """Return the exact correlation of the periodic ferromagnetic Ising chain.

    E[x_0 x_d] = (t^d + t^(n-d)) / (1 + t^n) with t = tanh J (transfer matrix).

    Parameters
    ----------
    J : float
        Coupling, >= 0.
    n : int
        Number of sites of the ring, >= 2.
    d : ArrayLike
        Distances along the ring (any shape; 0 <= d <= n).

    Returns
    -------
    np.ndarray
        E[x_0 x_d], float64, the shape of ``d``.
    """
    J = v.nonnegative("J", J)
    N = v.integer("n", n, 2)
    t = math.tanh(J)
    d = np.asarray(d, dtype=np.float64)
    return (np.power(t, d) + np.power(t, N - d)) / (1.0 + t**N)


def _ising_thresholds(J, N: int):
    """uint32 thresholds (N-1, 2) of P(x_{i+1} = x_i | u_i = x_i x_1 = +1 / -1), i = 1..N-1.

    P(x_{i+1} = s | x_i, x_1) ∝ T(x_i, s) [T^m](s, x_1), m = N - i, with [T^m](a, b) ∝ 1 + a b t^m:
    P(same | u) = (1 + t)(1 + u t^m) / (2 (1 + u t^(m+1))). For u = -1 we use
    1 - t^m = -expm1(m log t) and log t = log1p(-2 sigmoid(-2J)) (no cancellation as t -> 1).
    """
    J = jnp.asarray(J, jnp.float64)
    one_minus_t = 2.0 * jax.nn.sigmoid(-2.0 * J)
    t = 1.0 - one_minus_t
    logt = jnp.minimum(jnp.log1p(-one_minus_t), -1e-300)
    m = jnp.arange(N - 1, 0, -1, dtype=jnp.float64)  # m = N - i for i = 1..N-1
    tm = jnp.exp(m * logt)
    tm1 = jnp.exp((m + 1) * logt)
    p_plus = (1 + t) * (1 + tm) / (2 * (1 + tm1))
    p_minus = (1 + t) * jnp.expm1(m * logt) / (2 * jnp.expm1((m + 1) * logt))
    p = jnp.stack([p_plus, p_minus], axis=1)
    thr = jnp.floor(jnp.clip(p, 0.0, 1.0) * 2.0**32)
    return jnp.minimum(thr, 2.0**32 - 1).astype(jnp.uint32)


# One compiled program per (num, N, dtype): sampled eagerly, the chain's operations would each be
# compiled for every new size.
@partial(jax.jit, static_argnums=(2, 3, 4))
def _exact_chain(J, key, num: int, N: int, dtype):
    """(num, N) exact samples of the ring (the sequential construction of :class:`Ising`)."""
    thr = _ising_thresholds(J, N)
    k1, k2 = jax.random.split(key)
    x1 = jnp.where(jax.random.bernoulli(k1, 0.5, (num,)), 1, -1).astype(jnp.int8)
    bits = jax.random.bits(k2, (N - 1, num), jnp.uint32)

    def step(u, inp):
        th, b = inp
        same = b < jnp.where(u > 0, th[0], th[1])
        u = jnp.where(same, u, -u)
        return u, u

    _, us = jax.lax.scan(step, jnp.ones((num,), jnp.int8), (thr, bits))
    u = jnp.concatenate([jnp.ones((1, num), jnp.int8), us], axis=0)  # (N, num)
    return (u * x1[None, :]).T.astype(dtype)


@pytree_dataclass
class Ising(DataModel):
    """Periodic 1-D ferromagnetic Ising chain, p(x) ∝ exp(+J sum_i x_i x_{i+1}), x_{N+1} = x_1, J >= 0.

    (The paper's Eq. (2) has exp(-J sum x_i x_{i+1}), antiferromagnetic for J > 0; its text and
    code are ferromagnetic: longer correlations for larger J.)

    Exact sampler: x_1 uniform on {+-1}; then x_{i+1} given (x_i, x_1) from the transfer-matrix
    conditional (see ``_ising_thresholds``), a lax.scan over the chain. Probabilities are
    discretised to 2^-32. Exact covariance: ``ising_correlation``. Only 1-D ``n``.
    """

    lengthscale_name = "J"

    J: float

    def __post_init__(self):
        object.__setattr__(self, "J", family_parameter("J", self.J, v.nonnegative))

    @property
    def marginal(self) -> RademacherMarginal:
        """Return the coordinate law: ±1 with probability ½ each."""
        return RademacherMarginal()

    def check_shape(self, shape: tuple[int, ...]) -> None:
        """Raise ``ValueError`` unless ``shape`` is one axis (a ring)."""
        if len(shape) != 1:
            raise ValueError(f"n must be an int (1-D chain) for Ising, got shape {shape}")

    def _sample(self, key, num, shape, dtype, method):
        return _exact_chain(self.J, key, num, shape[0], dtype)

    def _covariance(self, shape):
        N = shape[0]
        J = concrete("J", self.J)
        d = (np.arange(N)[None, :] - np.arange(N)[:, None]) % N
        return ising_correlation(J, N, d)


@partial(jax.jit, static_argnames=("num", "n", "num_flips", "dtype"))
def _chains(key, coupling, num, n, num_flips, dtype):
    k_init, k_site, k_acc = jax.random.split(key, 3)
    x0 = jnp.where(jax.random.bernoulli(k_init, 0.5, (num, n)), 1, -1).astype(jnp.int8)
    sites = jax.random.randint(k_site, (num_flips, num), 0, n)
    logu = jnp.log(jax.random.uniform(k_acc, (num_flips, num), dtype=jnp.float64))
    rows = jnp.arange(num)

    def flip(x, inputs):
        s, lu = inputs
        xs = x[rows, s].astype(jnp.float64)
        field = x[rows, (s - 1) % n].astype(jnp.float64) + x[rows, (s + 1) % n].astype(jnp.float64)
        accept = lu < -2.0 * coupling * xs * field
        x = x.at[rows, s].set(jnp.where(accept, -x[rows, s], x[rows, s]))
        return x, None

    x, _ = jax.lax.scan(flip, x0, (sites, logu))
    return x.astype(dtype)


def metropolis_ising(
    key: jax.Array, J: float, n: int, num: int, *, num_flips: int = 1000, dtype: DTypeLike = jnp.float64
) -> jax.Array:
    """Return the last states of ``num`` independent short Metropolis chains on the periodic Ising chain.

    Each chain starts from independent uniform ±1 spins and is *not* burnt in, as in the code behind
    the paper's Ising figures (paper Sec. 2.3 calls it a Gibbs sampler). The result is not an exact
    Ising sample; compare with ``data.Ising(J).sample``.

    Parameters
    ----------
    key : jax.Array
        A JAX PRNG key (``jax.random.key(seed)``); split internally into the uniform start, the
        proposed sites and the acceptance draws (no key is reused).
    J : float
        Coupling (real; ``J > 0`` ferromagnetic, the sign convention of ``data.Ising``).
    n : int
        Chain length, >= 2.
    num : int
        Number of chains = number of returned examples, >= 1.
    num_flips : int
        Proposed single-spin flips per chain, >= 0 (the paper's public code used 1000 by default and
        2000 for Fig. 3); ``num_flips = 0`` returns the uniform start (independent ±1 spins).
    dtype : DTypeLike
        Floating dtype of the result.

    Returns
    -------
    jax.Array
        (num, n) entries ±1.
    """
    key = v.key("key", key)
    J = v.real_scalar("J", J)
    n = v.integer("n", n, 2)
    num = v.integer("num", num, 1)
    num_flips = v.integer("num_flips", num_flips, 0)
    if not jnp.issubdtype(jnp.dtype(dtype), jnp.floating):
        raise ValueError(f"dtype must be a floating dtype, got {dtype}")
    return _chains(key, J, num, n, num_flips, jnp.dtype(dtype))
