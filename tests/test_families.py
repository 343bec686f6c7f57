"""Tests of the data models and the task factory that the experiments moved into ``localization.data``:
``RootedKur`` (a Kur model carrying its spectral amplitudes as an array leaf) and ``family_task``."""

import jax
import jax.numpy as jnp
import numpy as np
import pytest

from localization import data, traced_task
from localization.data import kur_excess_kurtosis

KEY = jax.random.key(7)


# ----------------------------------------------------------------------------- RootedKur
@pytest.mark.slow
def test_rooted_kur_samples_equal_data_kur():
    rooted, kur = data.RootedKur.of(0.7, 5.0, 24), data.Kur(xi=0.7, k=5.0)
    for dtype in (jnp.float64, jnp.float32):
        a = jax.jit(lambda k, dtype=dtype: rooted.sample(k, 50, 24, dtype))(KEY)
        b = jax.jit(lambda k, dtype=dtype: kur.sample(k, 50, 24, dtype))(KEY)
        assert a.dtype == b.dtype == dtype
        assert float(jnp.max(jnp.abs(a - b))) == 0.0


@pytest.mark.slow
def test_rooted_kur_pytree_and_statistics():
    m = data.RootedKur.of(1.5, 10.0, 12)
    leaves, tree = jax.tree_util.tree_flatten(m)
    assert len(leaves) == 3
    m2 = jax.tree_util.tree_unflatten(tree, leaves)
    assert m2.k == 10.0 and m2.xi == 1.5 and m2.lengthscale == 1.5
    assert m.marginal.excess_kurtosis == pytest.approx(kur_excess_kurtosis(10.0), rel=1e-12)
    np.testing.assert_allclose(m.covariance(12), data.Kur(xi=1.5, k=10.0).covariance(12), atol=1e-14)
    # inside jit/vmap: a stack of two length-scales samples like the individual models
    stacked = traced_task.stack_tasks([data.RootedKur.of(0.5, 6.0, 12), data.RootedKur.of(2.0, 6.0, 12)], jnp.float64)
    xs = jax.jit(jax.vmap(lambda mm: mm.sample(KEY, 10, 12)))(stacked)
    np.testing.assert_allclose(xs[1], data.Kur(xi=2.0, k=6.0).sample(KEY, 10, 12), atol=1e-12)


def test_rooted_kur_validation():
    with pytest.raises(ValueError, match="xi"):
        data.RootedKur.of(0.0, 5.0, 10)
    with pytest.raises(ValueError, match="k"):
        data.RootedKur.of(1.0, 2.0, 10)
    with pytest.raises(ValueError, match="n"):
        data.RootedKur.of(1.0, 5.0, 1)
    with pytest.raises(ValueError, match="n must be 10"):
        data.RootedKur.of(1.0, 5.0, 10).sample(KEY, 3, 12)
    bare = data.RootedKur(amplitudes=np.ones(4), k=5.0)
    with pytest.raises(ValueError, match="xi"):
        bare.covariance(4)


# ----------------------------------------------------------------------------- family_task
def test_family_task():
    t = data.family_task("NLGP", 3.0)
    assert isinstance(t.model1, data.NLGP) and t.model1.gain == 3.0 and t.model1.xi == 3.0
    t = data.family_task("Kur", 6.0, xi=(0.3, 0.7))
    assert isinstance(t.model0, data.Kur) and t.model0.xi == 0.3
    t = data.family_task("Ising", 0.7)
    assert (t.model0.J, t.model1.J) == (0.3, 0.7)
    t = data.family_task("Gaussian clone of NLGP", 100.0)
    assert isinstance(t.model1, data.GaussianClone)
    np.testing.assert_allclose(t.model1.covariance(10), data.NLGP(xi=3.0, gain=100.0).covariance(10))
    assert t.model1.marginal.excess_kurtosis == 0.0
    with pytest.raises(ValueError, match="family"):
        data.family_task("Cauchy", 1.0)
    with pytest.raises(ValueError, match="J1"):
        data.family_task("Ising", 0.2)
    with pytest.raises(TypeError, match="param"):
        data.family_task("NLGP", "big")
