"""Identities of the library behind the chapter *The ReLU neuron on Gaussian data* (``book/gaussian.md``).

The chapter checks the sources' statements; these tests hold the library's identities: the flow and
loss of ``theory.gaussian`` against their formulas, the computations of ``localization.experiments.gaussian``
that the chapter's checks call, and the explorer's frame of ``localization.figures.gaussian``.
"""

import math
from types import SimpleNamespace

import numpy as np
import pytest

import localization
from localization import data
from localization.experiments import gaussian as gx
from localization.figures import gaussian as fg
from localization.theory import gaussian as gf
from localization.theory import mechanism as mech

localization.enable_float64()

C = math.sqrt(2 / math.pi)
N = 40
S0, S1 = (np.asarray(data.covariance(xi, N), dtype=np.float64) for xi in (1.0, 3.0))


def _w(seed=0, n=N):
    return np.random.default_rng(seed).normal(size=n) / math.sqrt(n)


def test_flow_and_loss_are_the_formulas():
    w = _w()
    flow = np.asarray(gf.flow(w, S0, S1))
    assert np.max(np.abs(flow - np.asarray(gx.flow_jax(w, S0, S1)))) < 1e-12
    moment = np.asarray(gf.half_space_moment(w, S1))
    assert np.max(np.abs(flow - (moment - 0.5 * (S0 + S1) @ w))) < 1e-12
    q1 = math.sqrt(w @ S1 @ w)
    assert abs(float(gf.loss(w, S0, S1)) - (0.5 - 0.5 * C * q1 + 0.25 * w @ (S0 + S1) @ w)) < 1e-12
    # the loss's gradient is minus the flow (central differences)
    eps, e = 1e-6, np.eye(N)
    grad = [
        (float(gf.loss(w + eps * e[i], S0, S1)) - float(gf.loss(w - eps * e[i], S0, S1))) / (2 * eps) for i in range(N)
    ]
    assert np.max(np.abs(np.asarray(grad) + flow)) < 1e-7


def test_fourier_jacobian_matches_the_proposition_at_a_pair():
    spec = mech.circulant_spectra(S0, S1)
    point = [p for p in gf.fixed_points(S0, S1) if p.freq == 1][0]
    w = gf.fixed_point_weights(point, N, phase=0.7)
    jq = gx.fourier_jacobian(w, S0, S1, spec.basis)
    expected = gx.proposition_jacobian(spec.lam0, spec.lam1, point.columns, phase=0.7)
    assert np.max(np.abs(jq - expected)) < 1e-10
    single = gx.proposition_jacobian(spec.lam0, spec.lam1, (0,))
    assert np.array_equal(single, np.diag(mech.linear_mode_rates(spec.lam0, spec.lam1, 0)))
    with pytest.raises(ValueError, match="columns"):
        gx.proposition_jacobian(spec.lam0, spec.lam1, (0, 1, 2))
    with pytest.raises(ValueError, match="basis"):
        gx.fourier_jacobian(w, S0, S1, np.eye(3))


def test_clone_sgd_statistics_on_the_fixed_point():
    """Fields sitting exactly at the constant fixed point: no deviation, nothing held elsewhere."""
    point = gf.fixed_points(S0, S1)[0]
    w_star = np.asarray(gf.fixed_point_weights(point, N))
    checkpoints = len(gx.CLONE_SGD["checkpoints"])
    weights = np.broadcast_to(w_star, (3, checkpoints, N))
    run = gx.CloneRun(
        task=None,
        cov=(S0, S1),
        w0=None,
        sgd=SimpleNamespace(weights=weights),
        flow=SimpleNamespace(weights=weights),
        shares_sgd=np.ones((3, checkpoints, N // 2 + 1)),
        shares_flow=None,
        fixed_point=point,
    )
    held = weights.copy()
    held[..., :] += 1e-3 * mech.circulant_spectra(S0, S1).basis[:, 1]
    run_held = run._replace(sgd=SimpleNamespace(weights=held))
    st = gx.clone_sgd_statistics(run_held)
    assert st["k1_lead"] > 1
    st = gx.clone_sgd_statistics(run)
    assert np.max(np.abs(st["amp_dev"])) < 1e-12 and np.max(np.abs(st["s_dev"])) < 1e-12
    assert st["flow_dev"] < 1e-12 and st["held_frac"] < 1e-24
    with pytest.raises(ValueError, match="late_step"):
        gx.clone_sgd_statistics(run, late_step=4001)


def test_draw_mode_explorer_validates_the_path():
    import matplotlib.pyplot as plt

    fig = plt.figure(layout="none")
    with pytest.raises(ValueError, match="path"):
        fg.draw_mode_explorer(fig, S0, S1, np.zeros((3, N + 1)), np.arange(3))
    axes = fg.draw_mode_explorer(fig, S0, S1, np.tile(_w(), (3, 1)), np.arange(3.0))
    assert set(axes) == {"ratio", "rates", "sgd"}
    plt.close(fig)


def test_mode_summary_finds_the_stable_constant_and_the_dominant_frequency():
    spec = mech.circulant_spectra(S0, S1)
    field = 0.1 * spec.basis[:, 0] + 0.5 * spec.basis[:, 3]
    modes = gx.mode_summary(S0, S1, field)
    assert modes.stable.freq == 0 and [p.freq for p in modes.points] == sorted(p.freq for p in modes.points)
    assert modes.rates.shape == modes.freqs.shape == (N - len(modes.stable.columns),)
    assert np.all(modes.rates < 0)
    k = int(spec.freq[3])
    assert modes.dominant == k and abs(modes.dominant_share - 0.25 / 0.26) < 1e-12
    with pytest.raises(ValueError, match="field"):
        gx.mode_summary(S0, S1, np.ones(N + 1))
