"""The Student-t protocols continued past t = 100 (experiments.elliptical.t3_*; book/elliptical.md).

The record ``book/data/t3_protocol_long.json`` asks whether the paper's frequency-1 Student-t field is a
transient. Here: the saddle's rate against the closed form of the Gaussian chapter's stability
computation, the predicted escape time against the flow, the continued run against the protocol's own
run (its first 10^4 steps must be that run), the record's resumption, and validation.
"""

import json
import math

import jax
import numpy as np
import pytest

from localization import data
from localization.experiments import elliptical as ell
from localization.theory import gaussian as gf

N, XI = 40, (1.0, 3.0)


@pytest.fixture(scope="module")
def t3():
    task = data.LengthscaleTask.of(data.StudentT, xi=XI, nu=3.0)
    cov0, cov1 = (np.asarray(s, dtype=np.float64) for s in task.covariances(N))
    return cov0, cov1, task.model1.marginal


def _spectra(cov0, cov1):
    lam0, lam1 = (data.spectral.circulant_eigenvalues(c[0])[: N // 2 + 1] for c in (cov0, cov1))
    return np.asarray(lam0), np.asarray(lam1)


def _tiny(**changes):
    fields = dict(
        name="tiny", init_scale=1.0, lr=0.01, batch=100, inits=2, steps=200, checkpoints=5, reference_step=100
    )
    return ell.T3Protocol(**{**fields, **changes})


@pytest.mark.slow
def test_saddle_rate_is_the_closed_form_rate(t3):
    # Gaussian chapter (prop-gauss-mode): at the fixed point of frequency j a perturbation at k grows at
    # 1/2 lambda_1(k) [r(j) - r(k)]; kappa drops out. Central differences: 1e-6 relative is ample.
    cov0, cov1, marginal = t3
    lam0, lam1 = _spectra(cov0, cov1)
    r = lam0 / lam1
    for j in (1, 2):
        closed = max(0.5 * lam1[k] * (r[j] - r[k]) for k in range(N // 2 + 1) if k != j)
        assert ell.saddle_rate(cov0, cov1, marginal=marginal, freq=j) == pytest.approx(closed, rel=1e-6)
    # the constant is stable: every direction decays
    assert ell.saddle_rate(cov0, cov1, marginal=marginal, freq=0) < 0


def _near_saddle(cov0, cov1, marginal, share0):
    """The frequency-1 fixed point with a constant part holding ``share0`` of ||w||^2 (norm kept)."""
    point = [p for p in gf.fixed_points(cov0, cov1, marginal=marginal) if p.freq == 1][0]
    w1 = gf.fixed_point_weights(point, N, phase=0.3)
    const = np.full(N, np.linalg.norm(w1) / math.sqrt(N))
    return math.sqrt(1 - share0) * w1 + math.sqrt(share0) * const


@pytest.mark.slow
def test_predicted_escape_time_against_the_flow(t3):
    # Two starts 4 decades apart in the constant's share: the linear prediction says their escape times
    # differ by ln(10^4) / (2 rate) (the nonlinear end phase is common and cancels): within 5 %. Each
    # escape time itself is within one e-folding time 1/rate of the prediction.
    cov0, cov1, marginal = t3
    rate = ell.saddle_rate(cov0, cov1, marginal=marginal, freq=1)
    shares = np.array([1e-2, 1e-6])
    w = np.stack([_near_saddle(cov0, cov1, marginal, s) for s in shares])
    flow = ell.flow_escape_time(w, cov0, cov1, marginal=marginal, lr=0.01, steps=40_000, every=10)
    predicted = ell.saddle_escape_time(shares, rate)
    assert np.all(np.isfinite(flow))
    assert np.all(np.abs(flow - predicted) < 1 / rate), (flow, predicted)
    gap = math.log(1e4) / (2 * rate)
    assert abs((flow[1] - flow[0]) / gap - 1) < 0.05, (flow, gap)


@pytest.mark.slow
def test_flow_escape_time_edges(t3):
    cov0, cov1, marginal = t3
    const = np.full((1, N), 0.2 / math.sqrt(N))
    assert ell.flow_escape_time(const, cov0, cov1, marginal=marginal, lr=0.01, steps=10, every=5)[0] == 0.0
    # the exact frequency-1 fixed point never leaves (no constant part to grow): inf, as documented
    w1 = _near_saddle(cov0, cov1, marginal, 0.0)[None]
    assert ell.flow_escape_time(w1, cov0, cov1, marginal=marginal, lr=0.01, steps=100, every=10)[0] == math.inf
    with pytest.raises(ValueError, match="w must"):
        ell.flow_escape_time(const[0], cov0, cov1, marginal=marginal, lr=0.01, steps=10, every=5)
    with pytest.raises(ValueError, match="every"):
        ell.flow_escape_time(const, cov0, cov1, marginal=marginal, lr=0.01, steps=10, every=11)


def test_saddle_escape_time_values_and_validation():
    # tau = ln(1 / (2 p0)) / (2 rate): p0 = 1/(2e) gives 1/(2 rate)
    assert ell.saddle_escape_time(np.array([1 / (2 * math.e)]), 0.25)[0] == pytest.approx(2.0, rel=1e-12)
    with pytest.raises(ValueError, match="share0"):
        ell.saddle_escape_time(np.array([0.5]), 0.1)
    with pytest.raises(ValueError, match="share0"):
        ell.saddle_escape_time(np.array([0.0]), 0.1)
    with pytest.raises(ValueError, match="rate"):
        ell.saddle_escape_time(np.array([0.1]), -0.1)


def test_protocol_validation():
    assert ell.T3_CELL7.checkpoint_steps[:2] == (0, 1000) and 10_000 in ell.T3_CELL7.checkpoint_steps
    assert 10_000 in ell.T3_SCRIPT.checkpoint_steps
    with pytest.raises(ValueError, match="batch"):
        _tiny(batch=101)
    with pytest.raises(ValueError, match="reference_step"):
        _tiny(reference_step=70)
    with pytest.raises(ValueError, match="nu"):
        _tiny(nu=2.0)
    with pytest.raises(ValueError, match="checkpoints"):
        _tiny(checkpoints=1)
    with pytest.raises(TypeError, match="xi"):
        _tiny(xi=[1.0, 3.0])
    with pytest.raises(TypeError, match="protocol"):
        ell.t3_protocol_run(jax.random.key(0), dict(name="x"))
    with pytest.raises(ValueError, match="distinct"):
        ell.t3_protocol_record(seeds=(0, 0), protocols={"tiny": _tiny()})
    with pytest.raises(TypeError, match="protocols"):
        ell.t3_protocol_record(seeds=(0,), protocols={"tiny": "cell 7"})


@pytest.mark.slow
def test_continued_run_starts_with_the_protocols_own_run():
    # the batch of step t is drawn from fold_in(key, t): the first 100 steps of a 200-step run are the
    # 100-step run itself, so the record's t = 100 fields are the paper protocol's result
    short = ell.t3_protocol_run(jax.random.key(3), _tiny(steps=100, checkpoints=3))
    long = ell.t3_protocol_run(jax.random.key(3), _tiny())
    assert short["times"] == long["times"][:3]
    for name in ("sgd_dominant", "flow_dominant"):
        assert [row[:3] for row in long[name]] == short[name], name
    for name in ("sgd_share0", "sgd_share1", "sgd_norm"):
        np.testing.assert_allclose(np.asarray(long[name])[:, :3], short[name], atol=2e-4, err_msg=name)
    # a different key draws other fields (the comparison above can fail)
    other = ell.t3_protocol_run(jax.random.key(4), _tiny(steps=100, checkpoints=3))
    assert np.max(np.abs(np.asarray(other["sgd_share1"]) - short["sgd_share1"])) > 1e-3
    assert long["saddle_rate"] > 0 and long["reference"] == 2
    assert np.shape(long["sgd_dominant"]) == (2, 5)


@pytest.mark.slow
def test_record_resumes(tmp_path):
    path = tmp_path / "t3.json"
    protocols = {"tiny": _tiny(steps=20, checkpoints=3, reference_step=10)}
    first = ell.t3_protocol_record(str(path), seeds=(0,), protocols=protocols)
    on_disk = json.loads(path.read_text())
    assert [e["seed"] for e in on_disk["seeds"]] == [0] and "commit" in on_disk
    again = ell.t3_protocol_record(str(path), seeds=(0, 1), protocols=protocols, resume=True)
    assert [e["seed"] for e in again["seeds"]] == [0, 1]
    assert again["seeds"][0] == json.loads(json.dumps(first["seeds"][0]))
    with pytest.raises(ValueError, match="settings"):
        changed = {"tiny": _tiny(steps=20, checkpoints=3, reference_step=10, nu=4.0)}
        ell.t3_protocol_record(str(path), seeds=(2,), protocols=changed, resume=True)


@pytest.mark.slow
def test_draw_t3_counts():
    import matplotlib

    matplotlib.use("Agg")
    from localization.figures import elliptical as ell_fig

    times = np.linspace(0, 400, 5)
    panel = dict(times=times, sgd=np.ones((3, 5)), flow=np.zeros((3, 5)), fields=16, escape=30.0)
    fig = ell_fig.draw_t3_counts({"a": panel, "b": {**panel, "sgd": np.ones(5)}}, reference=100.0)
    assert len(fig.axes) == 2 and len(fig.axes[0].lines) == 3 + 3 + 1
    with pytest.raises(ValueError, match="one count per time"):
        ell_fig.draw_t3_counts({"a": {**panel, "sgd": np.ones((3, 4))}}, reference=100.0)
    with pytest.raises(ValueError, match="panels"):
        ell_fig.draw_t3_counts({}, reference=100.0)
