"""Tests of localization.experiments (one-call sweeps behind the simulation chapter)."""

import math

import jax
import jax.numpy as jnp
import numpy as np
import pytest

from localization import data, experiments as ex, metrics, train
from localization._marginals import kur_excess_kurtosis, nlgp_excess_kurtosis
from localization.clone import GaussianClone

KEY = jax.random.key(7)
TINY = dict(n=16, inits=3, batch=64, steps=20, checkpoints=3)


# ----------------------------------------------------------------------------- RootedKur
def test_rooted_kur_samples_equal_data_kur():
    rooted, kur = ex.RootedKur.of(0.7, 5.0, 24), data.Kur(xi=0.7, k=5.0)
    for dtype in (jnp.float64, jnp.float32):
        a = jax.jit(lambda k: rooted.sample(k, 50, 24, dtype))(KEY)
        b = jax.jit(lambda k: kur.sample(k, 50, 24, dtype))(KEY)
        assert a.dtype == b.dtype == dtype
        assert float(jnp.max(jnp.abs(a - b))) == 0.0


def test_rooted_kur_pytree_and_statistics():
    m = ex.RootedKur.of(1.5, 10.0, 12)
    leaves, tree = jax.tree_util.tree_flatten(m)
    assert len(leaves) == 3
    m2 = jax.tree_util.tree_unflatten(tree, leaves)
    assert m2.k == 10.0 and m2.xi == 1.5 and m2.lengthscale == 1.5
    assert m.marginal.excess_kurtosis == pytest.approx(kur_excess_kurtosis(10.0), rel=1e-12)
    np.testing.assert_allclose(m.covariance(12), data.Kur(xi=1.5, k=10.0).covariance(12), atol=1e-14)
    # inside jit/vmap: a stack of two length-scales samples like the individual models
    stacked = train.stack_tasks([ex.RootedKur.of(0.5, 6.0, 12), ex.RootedKur.of(2.0, 6.0, 12)], jnp.float64)
    xs = jax.jit(jax.vmap(lambda mm: mm.sample(KEY, 10, 12)))(stacked)
    np.testing.assert_allclose(xs[1], data.Kur(xi=2.0, k=6.0).sample(KEY, 10, 12), atol=1e-12)


def test_rooted_kur_validation():
    with pytest.raises(ValueError, match="xi"):
        ex.RootedKur.of(0.0, 5.0, 10)
    with pytest.raises(ValueError, match="k"):
        ex.RootedKur.of(1.0, 2.0, 10)
    with pytest.raises(ValueError, match="n"):
        ex.RootedKur.of(1.0, 5.0, 1)
    with pytest.raises(ValueError, match="n must be 10"):
        ex.RootedKur.of(1.0, 5.0, 10).sample(KEY, 3, 12)
    bare = ex.RootedKur(amplitudes=np.ones(4), k=5.0)
    with pytest.raises(ValueError, match="xi"):
        bare.covariance(4)


# ----------------------------------------------------------------------------- init_neurons
def test_init_neurons_variance_and_validation():
    w = ex.init_neurons(KEY, 4000, 20, init_scale=1e-3, dtype=jnp.float64)
    assert w.shape == (4000, 20)
    var = float(jnp.var(w))
    expected = 1e-3 * 2 / 21
    se = expected * math.sqrt(2 / w.size)
    assert abs(var - expected) < 5 * se
    with pytest.raises(ValueError, match="inits"):
        ex.init_neurons(KEY, 0, 20)
    with pytest.raises(ValueError, match="n"):
        ex.init_neurons(KEY, 2, 1)
    with pytest.raises(ValueError, match="init_scale"):
        ex.init_neurons(KEY, 2, 20, init_scale=0.0)


# ----------------------------------------------------------------------------- ipr_sweep
def _nlgp_tasks(gains, xi=(0.3, 0.7)):
    return [data.LengthscaleTask.of(data.NLGP, xi=xi, gain=g) for g in gains]


def test_ipr_sweep_shapes_bounds_and_kurtosis():
    gains = (0.5, 3.0)
    res = ex.ipr_sweep(KEY, _nlgp_tasks(gains), params=gains, lr=0.1, keep_weights=True, **TINY)
    assert res.ipr.shape == (2, 3, 3) and res.weights.shape == (2, 3, 16) and res.path.shape == (2, 3, 3, 16)
    np.testing.assert_array_equal(res.path[:, :, -1, :], res.weights)
    np.testing.assert_allclose(res.ipr, np.asarray(metrics.ipr(res.path)), rtol=1e-12)
    assert res.final_ipr.shape == (2, 3) and res.mean.shape == (2,) and res.std.shape == (2,)
    assert np.all(res.ipr >= 1 / 16 - 1e-12) and np.all(res.ipr <= 1 + 1e-12)
    np.testing.assert_array_equal(res.steps, [0, 10, 20])
    np.testing.assert_allclose(res.times, res.steps * 0.1, rtol=0, atol=1e-15)
    np.testing.assert_allclose(res.excess_kurtosis, [nlgp_excess_kurtosis(g) for g in gains], rtol=1e-12)
    np.testing.assert_array_equal(res.params, gains)
    assert res.ipr.dtype == np.float64


def test_ipr_sweep_equals_train_online_per_task():
    """The vmapped sweep trains each task exactly like train_online with the same key and init."""
    task = _nlgp_tasks((2.0,))[0]
    res = ex.ipr_sweep(KEY, [task], lr=0.1, dtype=jnp.float64, **TINY)
    assert res.path is None
    k_init, k_data = jax.random.split(KEY)
    w0 = ex.init_neurons(k_init, 3, 16, 1e-3, jnp.float64)
    traj = train.train_online(k_data, task, w0, lr=0.1, batch=64, steps=20, checkpoints=3, n=16,
                              balanced=True, dtype=jnp.float64)
    np.testing.assert_allclose(res.ipr[0], np.asarray(metrics.ipr(traj.weights)), rtol=1e-10)
    assert np.all(np.isnan(res.params))


def test_ipr_sweep_validation():
    tasks = _nlgp_tasks((1.0, 2.0))
    with pytest.raises(TypeError, match="tasks"):
        ex.ipr_sweep(KEY, [], **TINY)
    with pytest.raises(ValueError, match="params"):
        ex.ipr_sweep(KEY, tasks, params=(1.0,), **TINY)
    with pytest.raises(ValueError, match=r"params\[1\]"):
        ex.ipr_sweep(KEY, tasks, params=(1.0, math.inf), **TINY)
    with pytest.raises(TypeError, match="key"):
        ex.ipr_sweep(0, tasks, **TINY)
    with pytest.raises(ValueError, match="inits"):
        ex.ipr_sweep(KEY, tasks, **{**TINY, "inits": 0})
    with pytest.raises(ValueError, match="lr"):
        ex.ipr_sweep(KEY, tasks, lr=-0.1, **TINY)
    with pytest.raises(TypeError, match="keep_weights"):
        ex.ipr_sweep(KEY, tasks, keep_weights=1, **TINY)


# ----------------------------------------------------------------------------- fig5
def test_fig5_tiny_run_and_settings():
    st = ex.PAPER_FIG5.replace(n=16, gains=(0.3, 5.0), ks=(4.5, 10.0), inits=2, batch=32, steps=10, checkpoints=2)
    r = ex.fig5(KEY, st)
    assert r.settings is st
    assert r.nlgp.ipr.shape == (2, 2, 2) and r.kur.ipr.shape == (2, 2, 2)
    np.testing.assert_allclose(r.kur.excess_kurtosis, [kur_excess_kurtosis(4.5), kur_excess_kurtosis(10.0)])
    rows = ex.fig5_table(r)
    assert [row["family"] for row in rows] == ["NLGP", "NLGP", "Kur", "Kur"]
    assert rows[2]["parameter"] == 4.5 and rows[3]["mean"] == pytest.approx(r.kur.mean[1])
    with pytest.raises(TypeError, match="result"):
        ex.fig5_table(r.nlgp)
    # same key -> same initialisations for both families
    np.testing.assert_array_equal(r.nlgp.ipr[:, :, 0], r.kur.ipr[:, :, 0])
    # paper defaults
    p = ex.PAPER_FIG5
    assert (p.n, p.xi, p.inits, p.lr, p.batch, p.steps, p.init_scale) == (40, (0.3, 0.7), 30, 0.1, 5000, 10_000, 1e-3)
    np.testing.assert_allclose(p.gains, np.logspace(-1, 1, 10))
    assert p.ks == (4.1, 4.3, 4.5, 4.74, 5.0, 5.4, 6.1, 7.7, 10.0, 50.0)


def test_fig5_validation():
    with pytest.raises(TypeError, match="settings"):
        ex.fig5(KEY, {"n": 40})
    with pytest.raises(ValueError, match="xi"):
        ex.fig5(KEY, ex.PAPER_FIG5.replace(xi=(0.7, 0.3)))
    with pytest.raises(ValueError, match="xi"):
        ex.fig5(KEY, ex.PAPER_FIG5.replace(xi=(-1.0, 0.3)))
    with pytest.raises(ValueError, match="gains"):
        ex.fig5(KEY, ex.PAPER_FIG5.replace(gains=()))


# ----------------------------------------------------------------------------- phase_diagram
def test_phase_diagram_matches_individual_sweeps():
    kw = dict(n=16, inits=2, batch=32, steps=10, checkpoints=2, dtype=jnp.float64)
    pd = ex.phase_diagram(KEY, [5.0, 10.0], [2.0, 3.0], xi0=0.5, **kw)
    assert pd.ipr.shape == (2, 2, 2) and pd.ipr_path.shape == (2, 2, 2, 2) and pd.mean.shape == (2, 2)
    np.testing.assert_allclose(pd.excess_kurtosis, [kur_excess_kurtosis(5.0), kur_excess_kurtosis(10.0)])
    # entry (ratio 3, k = 10) equals a plain Kur sweep with the same key (identical samples)
    task = data.LengthscaleTask.of(data.Kur, xi=(0.5, 1.5), k=10.0)
    ref = ex.ipr_sweep(KEY, [task], **kw)
    # the sweep stacks 4 tasks; common random numbers make entry (1, 1) identical up to rounding
    np.testing.assert_allclose(pd.ipr[1, 1], ref.final_ipr[0], rtol=1e-9)


def test_phase_diagram_validation():
    with pytest.raises(ValueError, match=r"ratios\[0\]"):
        ex.phase_diagram(KEY, [5.0], [1.0])
    with pytest.raises(ValueError, match="ks and ratios"):
        ex.phase_diagram(KEY, [], [2.0])
    with pytest.raises(ValueError, match="xi0"):
        ex.phase_diagram(KEY, [5.0], [2.0], xi0=0.0)
    with pytest.raises(ValueError, match="k"):
        ex.phase_diagram(KEY, [1.5], [2.0])
    with pytest.raises(ValueError, match=r"ks\[0\]"):
        ex.phase_diagram(KEY, [math.nan], [2.0])


# ----------------------------------------------------------------------------- settling_step
def test_settling_step():
    assert ex.settling_step([0.5, 0.5, 0.5], 0.01) == 0
    assert ex.settling_step([0.0, 0.2, 0.9, 0.95, 0.96], 0.02) == 3
    assert ex.settling_step([0.0, 1.0], 0.1) == 1  # only the last point: not settled before the end
    with pytest.raises(ValueError, match="tol"):
        ex.settling_step([0.1, 0.2], 0.0)
    with pytest.raises(ValueError, match="curve"):
        ex.settling_step(np.zeros((2, 2)), 0.1)


# ----------------------------------------------------------------------------- family_task
def test_family_task():
    t = ex.family_task("NLGP", 3.0)
    assert isinstance(t.model1, data.NLGP) and t.model1.gain == 3.0 and t.model1.xi == 3.0
    t = ex.family_task("Kur", 6.0, xi=(0.3, 0.7))
    assert isinstance(t.model0, data.Kur) and t.model0.xi == 0.3
    t = ex.family_task("Ising", 0.7)
    assert (t.model0.J, t.model1.J) == (0.3, 0.7)
    t = ex.family_task("Gaussian clone of NLGP", 100.0)
    assert isinstance(t.model1, GaussianClone)
    np.testing.assert_allclose(t.model1.covariance(10), data.NLGP(xi=3.0, gain=100.0).covariance(10))
    assert t.model1.marginal.excess_kurtosis == 0.0
    with pytest.raises(ValueError, match="family"):
        ex.family_task("Cauchy", 1.0)
    with pytest.raises(ValueError, match="J1"):
        ex.family_task("Ising", 0.2)
    with pytest.raises(TypeError, match="param"):
        ex.family_task("NLGP", "big")


def test_nlgp_localizes_and_its_gaussian_clone_does_not():
    """Physics smoke test at xi = (1, 3): NLGP(100) localizes within t = 20, its clone does not."""
    kw = dict(n=40, inits=4, batch=500, steps=400, checkpoints=2, lr=0.05)
    nl = ex.ipr_sweep(KEY, [ex.family_task("NLGP", 100.0)], **kw)
    cl = ex.ipr_sweep(KEY, [ex.family_task("Gaussian clone of NLGP", 100.0)], **kw)
    assert nl.final_ipr.min() > 0.3, nl.final_ipr
    assert cl.final_ipr.max() < 0.1, cl.final_ipr
