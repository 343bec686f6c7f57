"""Short Metropolis chains for the Ising model (the contrast used in the data chapter)."""

import itertools
import math

import jax
import jax.numpy as jnp
import numpy as np
import pytest

from localization.data import metropolis_ising


def exact_correlation(J, n, d):
    """E[x_0 x_d] on the periodic chain, by brute-force enumeration of all 2^n states."""
    states = np.array(list(itertools.product([-1.0, 1.0], repeat=n)))
    energy = J * np.sum(states * np.roll(states, -1, axis=1), axis=1)
    p = np.exp(energy - energy.max())
    p /= p.sum()
    return float(np.sum(p * states[:, 0] * states[:, d]))


@pytest.mark.slow
def test_output_shape_dtype_and_values():
    x = metropolis_ising(jax.random.key(0), 0.7, 12, 50, num_flips=30, dtype=jnp.float32)
    assert x.shape == (50, 12) and x.dtype == jnp.float32
    assert set(np.unique(np.asarray(x))) <= {-1.0, 1.0}


@pytest.mark.slow
def test_deterministic_given_key():
    a = metropolis_ising(jax.random.key(3), 0.5, 10, 20, num_flips=40)
    b = metropolis_ising(jax.random.key(3), 0.5, 10, 20, num_flips=40)
    np.testing.assert_array_equal(np.asarray(a), np.asarray(b))


@pytest.mark.slow
def test_zero_flips_is_uniform_start():
    num, n = 20000, 10
    x = np.asarray(metropolis_ising(jax.random.key(1), 2.0, n, num, num_flips=0))
    se = 1.0 / math.sqrt(num * n)
    assert abs(x.mean()) < 5 * se
    assert abs(np.mean(x * np.roll(x, -1, axis=1))) < 5 * se


@pytest.mark.slow
def test_long_chain_reaches_the_ising_law():
    # 400 proposals per site on n = 8: the chain has mixed; correlations match enumeration.
    J, n, num = 0.6, 8, 4000
    x = np.asarray(metropolis_ising(jax.random.key(2), J, n, num, num_flips=400 * n))
    for d in (1, 2, 4):
        c = np.mean(x * np.roll(x, -d, axis=1))
        exact = exact_correlation(J, n, d)
        se = math.sqrt((1 - exact**2) / num)  # conservative: one pair per chain
        assert abs(c - exact) < 5 * se, (d, c, exact)


@pytest.mark.slow
def test_short_chain_is_biased_at_strong_coupling():
    # The paper's Fig. 2 setting (J = 1.2, n = 100, 2000 proposals, no burn-in) is not at equilibrium:
    # the mean nearest-neighbour correlation at distance 5 is clearly below tanh(J)^5.
    J, n, num = 1.2, 100, 1000
    x = np.asarray(metropolis_ising(jax.random.key(4), J, n, num, num_flips=2000))
    c5 = np.mean(x * np.roll(x, -5, axis=1))
    t = math.tanh(J)
    exact = (t**5 + t ** (n - 5)) / (1 + t**n)
    assert exact - c5 > 0.02, (c5, exact)


def test_validation():
    k = jax.random.key(0)
    with pytest.raises(TypeError, match="key"):
        metropolis_ising(0, 0.5, 10, 10)
    with pytest.raises(ValueError, match="J"):
        metropolis_ising(k, float("nan"), 10, 10)
    with pytest.raises(TypeError, match="J"):
        metropolis_ising(k, "0.5", 10, 10)
    with pytest.raises(ValueError, match="n"):
        metropolis_ising(k, 0.5, 1, 10)
    with pytest.raises(TypeError, match="n"):
        metropolis_ising(k, 0.5, 10.0, 10)
    with pytest.raises(ValueError, match="num"):
        metropolis_ising(k, 0.5, 10, 0)
    with pytest.raises(ValueError, match="num_flips"):
        metropolis_ising(k, 0.5, 10, 10, num_flips=-1)
    with pytest.raises(ValueError, match="dtype"):
        metropolis_ising(k, 0.5, 10, 10, dtype=jnp.int32)
