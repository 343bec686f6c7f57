"""Short single-spin Metropolis chains for the periodic 1-D Ising model (a *contrast*, not a sampler).

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

from functools import partial

import jax
import jax.numpy as jnp

from . import _validation as V

__all__ = ["metropolis_ising"]


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


def metropolis_ising(key, J, n, num, *, num_flips=1000, dtype=jnp.float64):
    """Last states of ``num`` independent short Metropolis chains on the periodic Ising chain.

    Args:
        key: a JAX PRNG key (``jax.random.key(seed)``); split internally into the uniform start,
            the proposed sites and the acceptance draws (no key is reused).
        J: coupling (real; ``J > 0`` ferromagnetic, the sign convention of ``data.Ising``).
        n: chain length (int ≥ 2).
        num: number of chains = number of returned examples (int ≥ 1).
        num_flips: proposed single-spin flips per chain (int ≥ 0; the paper's public code used 1000 by default and 2000 for Fig. 3).
            ``num_flips = 0`` returns the uniform start (independent ±1 spins).
        dtype: floating dtype of the result.

    Returns:
        ``(num, n)`` array with entries ±1.

    Each chain starts from independent uniform ±1 spins and is *not* burnt in, as in the code behind
    the paper's Ising figures (paper Sec. 2.3 calls it a Gibbs sampler). The result is not an exact
    Ising sample; compare with ``data.Ising(J).sample``.
    """
    key = V.key("key", key)
    J = V.real_scalar("J", J)
    n = V.integer("n", n, 2)
    num = V.integer("num", num, 1)
    num_flips = V.integer("num_flips", num_flips, 0)
    if not jnp.issubdtype(jnp.dtype(dtype), jnp.floating):
        raise ValueError(f"dtype must be a floating dtype, got {dtype}")
    return _chains(key, J, num, n, num_flips, jnp.dtype(dtype))
