"""Tests of localization.experiments (one-call sweeps behind the simulation chapter)."""

import math

import jax
import jax.numpy as jnp
import numpy as np
import pytest

from localization import data, metrics, train
from localization import experiments as ex
from localization.data import kur_excess_kurtosis, nlgp_excess_kurtosis

KEY = jax.random.key(7)
TINY = dict(n=16, inits=3, batch=64, steps=20, checkpoints=3)


# ----------------------------------------------------------------------------- init_neurons
@pytest.mark.slow
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


@pytest.mark.slow
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


@pytest.mark.slow
def test_ipr_sweep_equals_train_online_per_task():
    """The vmapped sweep trains each task exactly like train_online with the same key and init."""
    task = _nlgp_tasks((2.0,))[0]
    res = ex.ipr_sweep(KEY, [task], lr=0.1, dtype=jnp.float64, **TINY)
    assert res.path is None
    k_init, k_data = jax.random.split(KEY)
    w0 = ex.init_neurons(k_init, 3, 16, 1e-3, jnp.float64)
    traj = train.train_online(
        k_data, task, w0, lr=0.1, batch=64, steps=20, checkpoints=3, n=16, balanced=True, dtype=jnp.float64
    )
    np.testing.assert_allclose(res.ipr[0], np.asarray(metrics.ipr(traj.weights)), rtol=1e-10)
    assert np.all(np.isnan(res.params))


@pytest.mark.slow
def test_ipr_sweep_per_init_streams():
    """streams="per_init" reaches train_online/train_sweep: each task and initialisation trains as
    train_online with streams="per_init"; fig5 passes settings.streams on; bad values are refused."""
    tasks = _nlgp_tasks((0.5, 3.0))
    res = ex.ipr_sweep(KEY, tasks, lr=0.1, dtype=jnp.float64, streams="per_init", **TINY)
    k_init, k_data = jax.random.split(KEY)
    w0 = ex.init_neurons(k_init, 3, 16, 1e-3, jnp.float64)
    for p, task in enumerate(tasks):
        traj = train.train_online(
            k_data,
            task,
            w0,
            lr=0.1,
            batch=64,
            steps=20,
            checkpoints=3,
            n=16,
            balanced=True,
            dtype=jnp.float64,
            streams="per_init",
        )
        np.testing.assert_allclose(res.ipr[p], np.asarray(metrics.ipr(traj.weights)), rtol=1e-10)
    shared = ex.ipr_sweep(KEY, tasks, lr=0.1, dtype=jnp.float64, **TINY)
    np.testing.assert_array_equal(shared.ipr[..., 0], res.ipr[..., 0])  # the same initialisations
    assert not np.allclose(shared.ipr[..., -1], res.ipr[..., -1])
    st = ex.PAPER_FIG5.replace(n=16, gains=(0.3,), ks=(10.0,), inits=2, batch=32, steps=10, checkpoints=2)
    assert ex.PAPER_FIG5.streams == "shared"
    np.testing.assert_array_equal(
        ex.fig5(KEY, st.replace(streams="per_init")).kur.ipr,
        ex.ipr_sweep(
            KEY,
            [data.family_task("Kur", 10.0, xi=st.xi)],
            n=16,
            inits=2,
            batch=32,
            steps=10,
            checkpoints=2,
            streams="per_init",
        ).ipr,
    )
    with pytest.raises(ValueError, match="streams must be one of"):
        ex.ipr_sweep(KEY, tasks, streams="own", **TINY)


@pytest.mark.slow
def test_ipr_sweep_on_a_grid_is_the_same_code():
    """A grid shape goes through the same sweep: two NLGP gains on a 4 × 5 torus train exactly like
    train_online on each task with n = (4, 5), and the weights are over the 20 flattened sites."""
    gains = (0.5, 3.0)
    tasks = _nlgp_tasks(gains)
    grid = dict(TINY, n=(4, 5))
    res = ex.ipr_sweep(KEY, tasks, params=gains, lr=0.1, dtype=jnp.float64, **grid)
    assert res.weights.shape == (2, 3, 20)
    k_init, k_data = jax.random.split(KEY)
    w0 = ex.init_neurons(k_init, 3, (4, 5), 1e-3, jnp.float64)
    assert w0.shape == (3, 20)
    for p, task in enumerate(tasks):
        traj = train.train_online(
            k_data, task, w0, lr=0.1, batch=64, steps=20, checkpoints=3, n=(4, 5), balanced=True, dtype=jnp.float64
        )
        np.testing.assert_allclose(res.ipr[p], np.asarray(metrics.ipr(traj.weights)), rtol=1e-10)


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
@pytest.mark.slow
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
@pytest.mark.slow
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


@pytest.mark.slow
def test_nlgp_localizes_and_its_gaussian_clone_does_not():
    """Physics smoke test at xi = (1, 3): NLGP(100) localizes within t = 20, its clone does not."""
    kw = dict(n=40, inits=4, batch=500, steps=400, checkpoints=2, lr=0.05)
    nl = ex.ipr_sweep(KEY, [data.family_task("NLGP", 100.0)], **kw)
    cl = ex.ipr_sweep(KEY, [data.family_task("Gaussian clone of NLGP", 100.0)], **kw)
    assert nl.final_ipr.min() > 0.3, nl.final_ipr
    assert cl.final_ipr.max() < 0.1, cl.final_ipr


# ----------------------------------------------------------------------------- data_properties
@pytest.mark.slow
def test_property_statistics_verdicts():
    """Weakly dependent Gaussian data: every z small; the single pulse: far coordinates dependent."""
    g = ex.property_statistics(KEY, data.Gaussian(xi=3.0), n=20, num=4000)
    assert g["s3"] < 5 and g["s2"] < 5
    assert all(abs(m) < 5 * s for m, s in g["alpha"])
    assert g["corr"] == pytest.approx(float(np.asarray(data.Gaussian(xi=3.0).covariance(20))[0, 10]), abs=0)
    p = ex.property_statistics(KEY, data.SinglePulse(low=0.2, high=0.4), n=20, num=4000)
    m, s = p["alpha"][0]
    assert abs(m) > 5 * s
    # Ising +-1 data: the large-value event |X| > median |X| is empty, so its bound is exactly 0 +- 0
    i = ex.property_statistics(KEY, data.Ising(J=0.7), n=20, num=2000)
    assert i["alpha"][1] == (0.0, 0.0)
    with pytest.raises(ValueError, match="n"):
        ex.property_statistics(KEY, data.Gaussian(xi=3.0), n=1)


# ----------------------------------------------------------------------------- settings built on OnlineSettings
def test_sweep_settings_are_validated_and_build_their_run():
    from localization.experiments import large_n, near_zero
    from localization.sgd import OnlineSettings

    run = ex.PAPER_FIG5.run
    assert isinstance(run, OnlineSettings) and (run.lr, run.batch, run.steps, run.n, run.balanced) == (
        0.1,
        5000,
        10_000,
        (40,),
        True,
    )
    assert ex.simulation.PAPER_RUN == run
    with pytest.raises(ValueError, match="lr"):
        ex.PAPER_FIG5.replace(lr=0.0)
    with pytest.raises(ValueError, match="streams"):
        ex.PAPER_FIG5.replace(streams="own")
    assert large_n.LARGE_N.run(100).steps == large_n.LARGE_N.steps(100) == 6000
    with pytest.raises(ValueError, match="max_steps"):
        large_n.LARGE_N.replace(max_steps=10)
    assert near_zero.BATCH_SCAN.run(25_000).batch == 25_000 and near_zero.NEAR_ZERO.run.steps == 10_000
    with pytest.raises(ValueError, match=r"tasks\[0\]"):
        near_zero.BATCH_SCAN.replace(tasks=(("Gauss", 1.0),))
    with pytest.raises(ValueError, match=r"seeds\[0\]"):
        near_zero.NEAR_ZERO.replace(seeds=(-1,))
    assert ex.FIG6_KUR10.run.model == "committee" and ex.FIG6_KUR10.run.activation == "sigmoid"
    with pytest.raises(ValueError, match="family"):
        ex.FIG6_KUR10.replace(family="Gauss")


def test_ipr_sweep_takes_online_settings():
    from localization.sgd import OnlineSettings

    tasks = _nlgp_tasks((1.0, 2.0))
    run = OnlineSettings(lr=0.1, batch=64, steps=20, checkpoints=3, n=16, balanced=True)
    a = ex.ipr_sweep(KEY, tasks, run, inits=3)
    b = ex.ipr_sweep(KEY, tasks, **TINY)  # the same run from PAPER_RUN's fields and the keywords
    np.testing.assert_array_equal(a.ipr, b.ipr)
    with pytest.raises(ValueError, match="neuron"):
        ex.ipr_sweep(KEY, tasks, OnlineSettings(lr=0.1, batch=4, steps=1, model="committee", activation="relu", n=16))
    with pytest.raises(TypeError, match="settings"):
        ex.ipr_sweep(KEY, tasks, {"lr": 0.1})


def test_settling_times_of_a_fig5_result():
    times = np.array([0.0, 1.0, 2.0])
    ipr = np.array([[[0.1, 0.9, 1.0]], [[0.5, 0.5, 0.5]]])  # (P=2, I=1, C=3)
    sweep = ex.IPRSweep(np.array([1.0, 2.0]), np.zeros(2), times, np.arange(3), ipr, np.zeros((2, 1, 4)))
    result = ex.Fig5Result(sweep, sweep, ex.PAPER_FIG5)
    settle = ex.simulation.settling_times(result, 0.2)
    assert settle == {("NLGP", 1.0): 1.0, ("NLGP", 2.0): 0.0, ("Kur", 1.0): 1.0, ("Kur", 2.0): 0.0}
    with pytest.raises(TypeError, match="result"):
        ex.simulation.settling_times(sweep, 0.2)
    with pytest.raises(ValueError, match="tol"):
        ex.simulation.settling_times(result, 0.0)
