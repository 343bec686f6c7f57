"""Tests of the large-N and data-versus-initialisation tools of ``experiments.simulation`` (issue 26)."""

import math

import numpy as np
import pytest

from localization import field_analysis
from localization.experiments import data_init as di
from localization.experiments import large_n as ln


def test_sites_holding_closed_forms():
    assert field_analysis.sites_holding(np.eye(7)[3]) == 1
    assert field_analysis.sites_holding(np.ones(10), 0.9) == 9
    assert field_analysis.sites_holding(np.ones(10), 0.95) == 10
    assert field_analysis.sites_holding(np.ones(10), 1.0) == 10
    # two equal sites and a small tail: 90 % needs both big sites only if they hold >= 90 %
    w = np.array([3.0, 3.0, 1.0, 0.0])
    assert field_analysis.sites_holding(w, 0.9) == 2 and field_analysis.sites_holding(w, 0.95) == 3
    # batched, sign- and scale-invariant
    W = np.stack([np.eye(5)[0], -2 * np.ones(5)])
    np.testing.assert_array_equal(field_analysis.sites_holding(W, 0.5), [1, 3])


def test_sites_holding_validates():
    with pytest.raises(ValueError, match="fraction"):
        field_analysis.sites_holding(np.ones(3), 0.0)
    with pytest.raises(ValueError, match="all zero"):
        field_analysis.sites_holding(np.zeros(3))


def test_transition_point_linear():
    # IPR falls linearly from 1 at -2 to 0 at 0: crosses 0.5 at -1 (order of the points irrelevant)
    x = np.array([0.0, -2.0, -1.5, -0.5])
    y = -x / 2
    assert ln.transition_point(x, y, 0.5) == pytest.approx(-1.0, abs=1e-12)
    assert math.isnan(ln.transition_point(x, np.full(4, 0.1), 0.5))
    with pytest.raises(ValueError, match="1-D"):
        ln.transition_point(x, y[:3])


def test_steps_clip():
    s = ln.LargeNSettings(min_steps=100, steps_per_site=10, max_steps=1000)
    assert (s.steps(5), s.steps(40), s.steps(400)) == (100, 400, 1000)


def test_two_way_variance_components():
    rng = np.random.default_rng(0)
    D, J = 40, 30
    a, b = rng.normal(0, 2.0, D), rng.normal(0, 1.0, J)
    y = a[:, None] + b[None, :] + rng.normal(0, 0.5, (D, J))
    tw = di.two_way_variance(y)
    # estimates of 4, 1, 0.25 within generous sampling error
    assert tw.data == pytest.approx(4.0, rel=0.6)
    assert tw.init == pytest.approx(1.0, rel=0.6)
    assert tw.residual == pytest.approx(0.25, rel=0.2)
    assert tw.share("data") + tw.share("init") + tw.share("residual") == pytest.approx(1.0)
    # a pure row effect: no column or residual part, F_data infinite
    pure = di.two_way_variance(np.add.outer(np.arange(4.0), np.zeros(3)))
    assert pure.init == 0 and pure.residual == 0 and pure.share("data") == 1
    # points on the circle: a row effect in the angle is a data part
    theta = np.add.outer(rng.uniform(0, 2 * np.pi, 20), np.zeros(10))
    tw = di.two_way_variance(np.exp(1j * (theta + rng.normal(0, 0.05, theta.shape))))
    assert tw.share("data") > 0.95
    with pytest.raises(ValueError, match="2-D"):
        di.two_way_variance(np.ones(4))


def test_peak_agreement_by_pair():
    n = 40
    # peak set by the initialisation (column) alone
    cols = np.array([0, 10, 20, 30])
    by_init = np.tile(cols, (5, 1))
    out = di.peak_agreement_by_pair(by_init, n)
    assert out["same_init"] == 1 and out["same_data"] == 0 and out["neither"] == 0
    assert out["chance"] == pytest.approx(3 / 40)
    # peak set by the data stream (row); ring wrap: 39 and 0 are neighbours
    by_data = np.tile(np.array([[39], [12], [25]]), (1, 4))
    by_data[0, 1] = 0
    out = di.peak_agreement_by_pair(by_data, n)
    assert out["same_data"] == 1 and out["same_init"] == 0


def test_large_n_summary_synthetic():
    times = [0.0, 1.0, 2.0]
    fam = dict(
        params=[2.0, 1.0],
        excess_kurtosis=[-2.0, 0.0],
        ipr_path=[[[0.1, 0.6, 0.9]] * 2, [[0.1, 0.1, 0.1]] * 2],
        final_ipr=[[0.9, 0.9], [0.1, 0.1]],
        sites90=[[1, 1], [30, 30]],
    )
    width = dict(params=[3.0], excess_kurtosis=[-2.0], ipr_path=[[[0.1, 0.5, 0.5]] * 2], final_ipr=[[0.5, 0.25]])
    width["sites90"] = [[2, 4]]
    rec = dict(sizes=[dict(n=40, steps=20, times=times, NLGP=fam, Kur=fam, width_3=width)])
    (z,) = ln.large_n_summary(rec)
    # mean IPR 0.9 at -2 and 0.1 at 0: crosses 0.5 at -1
    assert z.crossing["NLGP"] == pytest.approx(-1.0)
    # strongest gain reaches 0.5 between t = 0 (0.1) and t = 1 (0.6): at 0.8
    assert z.t_loc == pytest.approx(0.8)
    assert z.width_ipr[3.0] == pytest.approx(3.0) and z.width_sites[3.0] == 3.0
    # the curve large_n_time draws: the strongest gain's IPR path averaged over initialisations
    (curve,) = ln.strongest_gain_ipr(rec)
    np.testing.assert_allclose(curve, [0.1, 0.6, 0.9])
    with pytest.raises(ValueError, match="record"):
        ln.strongest_gain_ipr({"sizes": []})


def test_two_way_p_values():
    rng = np.random.default_rng(1)
    noise = di.two_way_variance(rng.normal(size=(10, 10)))
    assert 0 < noise.p_data < 1 and 0 < noise.p_init < 1
    strong = di.two_way_variance(np.add.outer(np.arange(10.0), np.zeros(10)) + rng.normal(0, 0.1, (10, 10)))
    assert strong.p_data < 1e-10 and strong.p_init > 1e-3


@pytest.mark.slow
def test_data_init_grid_shapes_and_streams():
    import jax

    from localization import data

    kd, ki = di.data_init_keys(0)
    task = [data.family_task("Kur", 10.0, xi=(0.3, 0.7))]
    kw = dict(data_streams=2, inits=2, n=8, batch=16, steps=3, init_scale=1.0)
    g = di.data_init_grid(kd, ki, task, values=[10.0], **kw)
    assert g.ipr.shape == g.peak.shape == (1, 2, 2) and g.n == 8
    assert np.all((g.peak >= 0) & (g.peak < 8)) and np.all((g.ipr >= 1 / 8 - 1e-6) & (g.ipr <= 1 + 1e-6))
    # reproducible from its keys; another data key changes the runs
    again = di.data_init_grid(kd, ki, task, values=[10.0], **kw)
    np.testing.assert_array_equal(g.ipr, again.ipr)
    other = di.data_init_grid(jax.random.key(7), ki, task, values=[10.0], **kw)
    assert not np.array_equal(g.ipr, other.ipr)
    with pytest.raises(ValueError, match="data_streams"):
        di.data_init_grid(kd, ki, task, data_streams=1)


@pytest.mark.slow
def test_large_n_sweep_record_structure(tmp_path):
    import json

    import jax

    s = ln.LargeNSettings(
        ns=(8,), gains=(0.5, 10.0), ks=(6.0, 10.0), width_scales=(3.0,), inits=2, batch=8,
        min_steps=4, steps_per_site=1, max_steps=4, checkpoints=3,
    )  # fmt: skip
    path = tmp_path / "r.json"
    rec = ln.large_n_sweep(jax.random.key(0), s, path=str(path), provenance=dict(seed=0, command="cmd"))
    assert json.loads(path.read_text())["settings"] == json.loads(json.dumps(rec["settings"]))
    assert (rec["seed"], rec["command"]) == (0, "cmd")
    (sz,) = rec["sizes"]
    assert sz["n"] == 8 and sz["steps"] == 4 and len(sz["times"]) == 3
    assert np.shape(sz["NLGP"]["ipr_path"]) == (2, 2, 3) and np.shape(sz["width_3"]["sites90"]) == (1, 2)
    (z,) = ln.large_n_summary(rec)
    assert set(z.width_ipr) == {3.0}
    # resuming a finished record runs nothing and keeps it
    again = ln.large_n_sweep(jax.random.key(1), s, path=str(path), resume=True)
    assert again["sizes"] == json.loads(path.read_text())["sizes"]


def test_large_n_near_zero_settings_and_registration():
    from localization import data
    from localization.experiments import runs

    s = ln.LARGE_N_NEAR_ZERO
    assert runs.RUNS["large_n_near_zero"] is s
    # N = 100 at batch 50 N, for the paper's 10 000 steps; the batch and step rule of LARGE_N_BATCH otherwise
    assert s.ns == (100,) and s.batch == 50 * 100 and s.steps(100) == s.run(100).steps == 10_000
    assert s.width_scales == () and (s.lr, s.inits, s.xi) == (ln.LARGE_N_BATCH.lr, 4, (0.3, 0.7))
    exk = {
        fam: [float(data.family_task(fam, p, xi=s.xi).marginals[1].excess_kurtosis) for p in values]
        for fam, values in (("NLGP", s.gains), ("Kur", s.ks))
    }
    # three points of each family within 0.5 of zero excess kurtosis, one Kur point above zero
    for fam in ("NLGP", "Kur"):
        assert sum(abs(x) < 0.5 for x in exk[fam]) >= 3, exk
    assert max(exk["Kur"]) > 0 > min(exk["Kur"]), exk
    # the long run: the same batch, twice the horizon, the points nearest zero only
    long = ln.LARGE_N_NEAR_ZERO_LONG
    assert runs.RUNS["large_n_near_zero_long"] is long
    assert long.steps(100) == 2 * s.steps(100) and long.batch == s.batch and long.ns == s.ns
    assert set(long.gains) < set(s.gains) and set(long.ks) < set(s.ks) and max(long.ks) < max(s.ks)


def test_data_init_summary_splits_every_task():
    rng = np.random.default_rng(0)
    record = dict(settings=dict(n=8), ipr=rng.random((2, 3, 4)).tolist(), peak=rng.integers(0, 8, (2, 3, 4)).tolist())
    s = di.data_init_summary(record)
    assert s.record is record and len(s.ipr) == len(s.peak) == len(s.agreement) == 2
    assert s.ipr[1] == di.two_way_variance(np.asarray(record["ipr"][1]))
    with pytest.raises(TypeError, match="record"):
        di.data_init_summary({"ipr": []})


def test_mean_ipr_paths_averages_initialisations_of_one_size():
    # two points, three initialisations, two checkpoints; the mean over inits is known exactly
    path = [[[0.1, 0.2], [0.3, 0.4], [0.5, 0.9]], [[0.0, 1.0], [0.0, 1.0], [0.3, 0.1]]]
    size = dict(n=50, NLGP=dict(ipr_path=path), Kur=dict(ipr_path=path))
    got = ln.mean_ipr_paths(dict(sizes=[size]), "NLGP")
    np.testing.assert_allclose(got, [[0.3, 0.5], [0.1, 0.7]], rtol=1e-12)
    two = dict(sizes=[size, {**size, "n": 80, "Kur": dict(ipr_path=[[[1.0, 1.0]]])}])
    np.testing.assert_allclose(ln.mean_ipr_paths(two, "Kur", n=80), [[1.0, 1.0]])
    with pytest.raises(ValueError, match="n must name a size"):
        ln.mean_ipr_paths(two, "Kur")
    with pytest.raises(ValueError, match="n must be a size"):
        ln.mean_ipr_paths(two, "Kur", n=60)
    with pytest.raises(ValueError, match="family"):
        ln.mean_ipr_paths(dict(sizes=[size]), "Ising")


def test_rise_time_interpolates_the_fraction_of_the_rise():
    times = np.array([0.0, 10.0, 20.0, 30.0, 40.0])
    # start 0, end (mean of the last 2) 1: the half rise at 0.5, between t = 10 (0.4) and 20 (0.8)
    curve = np.array([0.0, 0.4, 0.8, 1.0, 1.0])
    assert ln.rise_time(times, curve, 0.5, tail=2) == pytest.approx(12.5, abs=1e-12)
    assert ln.rise_time(times, curve, 1.0, tail=2) == pytest.approx(30.0, abs=1e-12)
    # the end is the mean of the tail: 0.8 with tail 3 ((0.4 + 1 + 1) / 3), half at 0.4 -> t = 20
    curve2 = np.array([0.0, 0.2, 0.4, 1.0, 1.0])
    assert ln.rise_time(times, curve2, 0.5, tail=3) == pytest.approx(20.0, abs=1e-12)
    assert math.isnan(ln.rise_time(times, curve[::-1]))
    with pytest.raises(ValueError, match="fraction"):
        ln.rise_time(times, curve, 0.0)
    with pytest.raises(ValueError, match="tail"):
        ln.rise_time(times, curve, tail=6)
    with pytest.raises(ValueError, match="1-D"):
        ln.rise_time(times[:3], curve)
