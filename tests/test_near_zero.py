"""Tests of the near-zero tools of the simulation chapter: the effective flow's bump fixed point and
its spectrum (``experiments.bump_flow``), the recorded SGD sweeps (``experiments.near_zero``) and what
their records say (``experiments.near_zero_summary``)."""

import json
import math

import jax
import numpy as np
import pytest

import localization
from localization import data
from localization.experiments import bump_flow as bf
from localization.experiments import near_zero as nz
from localization.experiments import near_zero_summary as nzs
from localization.field_analysis import localization_share

XI = (0.3, 0.7)
N = 40


@pytest.fixture(autouse=True)
def _float64():
    localization.enable_float64()


def test_flow_bump_sharp_broad_and_none():
    # NLGP(10): a one-site bump, stable; NLGP(0.1): the flow returns to the constant (a quarter of the
    # ring holds exactly a quarter of |w|^2), stable, no translation mode
    sharp = bf.flow_bump(data.family_task("NLGP", 10.0, xi=XI), N)
    assert sharp.localized and sharp.share > 0.99 and sharp.width == 1 and sharp.ipr > 0.9
    assert sharp.stable and sharp.residual <= 1e-12 and sharp.eigenvalues.max() < 0
    flat = bf.flow_bump(data.family_task("NLGP", 0.1, xi=XI), N)
    assert not flat.localized and abs(flat.share - 0.25) < 1e-12 and flat.width == 32
    assert abs(flat.ipr - 1 / N) < 1e-12 and math.isnan(flat.translation) and flat.stable
    assert flat.largest_other == pytest.approx(flat.eigenvalues.max(), abs=0)
    # the residual is that of the fixed point the function returns
    assert np.ptp(flat.w_star) < 1e-12


def test_flow_bump_keeps_the_stable_centring():
    # NLGP(0.464): the bump centred on a site and the one between two sites are both fixed points; one
    # is a saddle along the translation mode (a positive eigenvalue), and flow_bump returns the other
    b = bf.flow_bump(data.family_task("NLGP", 0.4641588833612779, xi=XI), N)
    assert b.localized and b.stable and b.translation < 0 and b.largest_other < 0
    assert b.translation in b.eigenvalues and b.eigenvalues.max() == max(b.translation, b.largest_other)


def test_constant_growth_changes_sign_where_the_bump_is_born():
    # the constant is stable at NLGP(0.1) (no bump) and unstable at NLGP(0.19), where a bump exists
    assert bf.constant_growth(data.family_task("NLGP", 0.1, xi=XI), N) < 0
    assert bf.constant_growth(data.family_task("NLGP", 0.19, xi=XI), N) > 0
    assert bf.flow_bump(data.family_task("NLGP", 0.19, xi=XI), N).share > 0.8


def test_flow_bumps_and_validation():
    out = bf.flow_bumps("Kur", [50.0], xi=XI, n=N)
    assert len(out) == 1 and out[0].localized
    task = data.family_task("Kur", 50.0, xi=XI)
    with pytest.raises(TypeError, match="task"):
        bf.flow_bump("Kur", N)
    with pytest.raises(ValueError, match="n"):
        bf.flow_bump(task, 3)
    with pytest.raises(ValueError, match="t_end"):
        bf.flow_bump(task, N, t_end=0.0)
    with pytest.raises(ValueError, match="start_width"):
        bf.flow_bump(task, N, start_width=-1.0)
    with pytest.raises(ValueError, match="family"):
        bf.flow_bumps("Gauss", [1.0], xi=XI)
    with pytest.raises(ValueError, match="non-empty"):
        bf.flow_bumps("Kur", [], xi=XI)
    with pytest.raises(TypeError, match="task"):
        bf.constant_growth(None)


def test_flow_curve_matches_flow_bumps_and_validates():
    curve = bf.flow_curve("Kur", [50.0, 60.0], xi=XI, n=N)
    again = bf.flow_bumps("Kur", [50.0, 60.0], xi=XI, n=N)
    assert curve.family == "Kur" and curve.xi == XI and curve.params.tolist() == [50.0, 60.0]
    assert [b.width for b in again] == curve.width.tolist() and [b.share for b in again] == curve.share.tolist()
    assert curve.constant_growth.tolist() == [b.constant_growth for b in again]
    exk = [data.family_task("Kur", k, xi=XI).marginals[1].excess_kurtosis for k in (50.0, 60.0)]
    assert curve.excess_kurtosis.tolist() == exk
    with pytest.raises(ValueError, match="params"):
        bf.flow_curve("Kur", [], xi=XI)
    assert set(bf.FLOW_GRID) == set(bf.FLOW_GRID_WIDE) == {"NLGP", "Kur"}


def test_end_spread_and_evidence_validation():
    share = np.array([[[0.9, 0.5], [0.9, 0.7], [0.9, 0.9]]])  # (S=1, I=3, C=2)
    width = np.array([[[4, 2], [4, 6], [4, 10]]])
    p = nzs.NearZeroPoint("Kur", 6.0, 0.1, np.array([0.0, 1.0]), share, width, share, share[..., -1] > 0.8, 1 / 3, None)
    sp = nzs.end_spread([p, p])
    assert sp.excess_kurtosis.tolist() == [0.1, 0.1] and sp.share.tolist() == [0.7, 0.7] and sp.width[0] == 6
    lo, hi = np.percentile([2, 6, 10], [10, 90])
    np.testing.assert_allclose(sp.width_err[:, 0], [6 - lo, hi - 6])
    with pytest.raises(ValueError, match="points"):
        nzs.end_spread([])
    with pytest.raises(ValueError, match="record"):
        nzs.near_zero_evidence({"seeds": []}, {}, {})
    with pytest.raises(ValueError, match="flow_grid"):
        nzs.near_zero_evidence({"seeds": [{}]}, {}, {}, flow_grid={"NLGP": ()})


def test_field_paths_closed_forms():
    onehot, const = np.eye(N)[5], np.ones(N)
    path = np.stack([np.stack([const, onehot]), np.stack([onehot, -2 * const])])  # (2 runs, 2 checkpoints, N)
    fp = nzs.field_paths(path, [0.0, 1.0], N)
    np.testing.assert_allclose(fp.share, [[0.25, 1.0], [1.0, 0.25]], atol=1e-12)
    np.testing.assert_array_equal(fp.width, [[32, 1], [1, 32]])
    np.testing.assert_allclose(fp.ipr, [[1 / N, 1.0], [1.0, 1 / N]], atol=1e-12)
    np.testing.assert_allclose(np.linalg.norm(fp.final, axis=-1), 1.0)
    np.testing.assert_allclose(fp.final[1], -const / np.sqrt(N))
    with pytest.raises(ValueError, match="times"):
        nzs.field_paths(path, [0.0, 1.0, 2.0], N)
    with pytest.raises(ValueError):
        nzs.field_paths(path[..., :-1], [0.0, 1.0], N)


def test_localization_time():
    t = np.array([0.0, 1.0, 2.0, 3.0, 4.0])
    share = np.array(
        [
            [0.5, 0.9, 0.7, 0.9, 0.95],  # localized for good from t = 3 (it left at t = 2)
            [0.9, 0.9, 0.9, 0.9, 0.5],  # not localized at the end
            [0.81, 0.9, 0.9, 0.9, 0.9],  # from the start
            [0.5, 0.5, 0.5, 0.5, 0.8],  # 0.8 is not more than 0.8
        ]
    )
    out = nzs.localization_time(share, t)
    assert out[0] == 3.0 and math.isnan(out[1]) and out[2] == 0.0 and math.isnan(out[3])
    with pytest.raises(ValueError, match="increasing"):
        nzs.localization_time(share, t[::-1])
    with pytest.raises(ValueError, match="one entry per checkpoint"):
        nzs.localization_time(share, t[:3])


def test_near_zero_seed_and_record_resume(tmp_path):
    tiny = nz.NEAR_ZERO.replace(gains=(10.0,), ks=(5.4,), wide_gains=(), wide_ks=(6.1,), inits=2)
    tiny = tiny.replace(steps=20, checkpoints=3, seeds=(0,), batch=64)
    out = nz.near_zero_seed(0, tiny)
    assert set(out) >= {"seed", "times", "seconds", "NLGP", "Kur", "Kur_wide"} and "NLGP_wide" not in out
    g = out["NLGP"]
    assert np.shape(g["share"]) == (1, 2, 3) and np.shape(g["final_weights"]) == (1, 2, N)
    assert np.allclose(np.linalg.norm(g["final_weights"], axis=-1), 1.0, atol=1e-4)
    assert np.all(np.asarray(g["share"]) >= 0.25 - 1e-9) and np.all(np.asarray(g["width"]) >= 1)
    # the record stores the shares of the fields it stores
    np.testing.assert_allclose(
        localization_share(np.asarray(g["final_weights"]), N), np.asarray(g["share"])[..., -1], atol=1e-3
    )
    path = tmp_path / "nz.json"
    rec = nz.near_zero_record(tiny, path=str(path))
    assert [s["seed"] for s in rec["seeds"]] == [0] and json.loads(path.read_text())["settings"]["batch"] == 64
    more = nz.near_zero_record(tiny.replace(seeds=(0, 1)), path=str(path), resume=False)
    assert [s["seed"] for s in more["seeds"]] == [0, 1]
    with pytest.raises(ValueError, match="settings"):
        nz.near_zero_record(tiny.replace(inits=3), path=str(path), resume=True)
    points = nzs.near_zero_summary(more, "Kur")
    assert len(points) == 1 and points[0].share.shape == (2, 2, 3) and points[0].family == "Kur"
    assert points[0].fraction == pytest.approx(points[0].localized.mean())
    with pytest.raises(ValueError, match="group"):
        nzs.near_zero_summary(more, "Ising")
    with pytest.raises(ValueError, match="record"):
        nzs.near_zero_summary({"seeds": []}, "Kur")


def test_batch_scan_seed_same_initialisations_and_summary():
    tiny = nz.BATCH_SCAN.replace(tasks=(("NLGP", 10.0),), batches=(16, 64), inits=2, steps=1, checkpoints=2)
    out = nz.batch_scan_seed(0, tiny)
    assert [(r["family"], r["batch"]) for r in out["runs"]] == [("NLGP", 16), ("NLGP", 64)]
    # the same initial weights at every batch: the t = 0 checkpoint is the same
    ipr0 = [np.asarray(r["ipr"])[0, :, 0] for r in out["runs"]]
    np.testing.assert_allclose(ipr0[0], ipr0[1], atol=0)
    points = nzs.batch_scan_summary({"seeds": [out, out]})
    assert [p.batch for p in points] == [16, 64] and points[0].ipr.shape == (2, 2, 2)
    with pytest.raises(ValueError, match="batch_scan_record"):
        nzs.batch_scan_summary({"seeds": [{"seed": 0}]})


def test_validation_of_the_runs():
    with pytest.raises(ValueError, match="seed"):
        nz.near_zero_seed(-1)
    with pytest.raises(TypeError, match="settings"):
        nz.near_zero_seed(0, nz.BATCH_SCAN)
    with pytest.raises(TypeError, match="settings"):
        nz.batch_scan_seed(0, nz.NEAR_ZERO)
    with pytest.raises(TypeError, match="settings"):
        nz.near_zero_record(nz.BATCH_SCAN)


def test_record_commands_refuse_an_unknown_name_or_settings_of_another_kind():
    with pytest.raises(ValueError, match="name must be one of"):
        nz.write_named_record("near_one")
    with pytest.raises(TypeError, match="settings must be a NearZeroSettings"):
        nz.near_zero_run(jax.random.key(0), nz.BATCH_SCAN)
    with pytest.raises(TypeError, match="settings must be a BatchScanSettings"):
        nz.batch_scan_record(nz.NEAR_ZERO)
