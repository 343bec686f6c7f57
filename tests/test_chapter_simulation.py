"""Library identities the simulation chapter (``book/simulation.md``) relies on, as unit tests.

The chapter checks the paper's statements and its own findings; what is an identity of the library
(the trainer's step, the invariances of ``metrics.ipr``) or plumbing of its figure modules
(``figures.simulation``) and of the summaries it reads (``experiments.near_zero_summary``) is tested here.
"""

from __future__ import annotations

import dataclasses
from typing import NamedTuple

import jax
import jax.numpy as jnp
import numpy as np
import pytest

import localization
from localization import data, metrics, models, train
from localization import experiments as ex
from localization.experiments import near_zero_summary as nzs
from localization.figures import simulation as fsim

N = 40


@pytest.fixture(autouse=True)
def _float64():
    localization.enable_float64()


def _batch(n=N, m=256):
    task = data.LengthscaleTask.of(data.NLGP, xi=(1.0, 3.0), gain=3.0)
    x, y = task.sample(jax.random.PRNGKey(0), m, n, jnp.float64)
    w = ex.init_neurons(jax.random.PRNGKey(1), 1, n, init_scale=1.0, dtype=jnp.float64)[0]
    return task, x, y, w


@pytest.mark.slow
def test_full_batch_step_is_gradient_step():
    """One step of ``train.train_on_data`` is w - lr * grad of ``models.mse`` (Eq. eq-sim-sgd)."""
    _, x, y, w = _batch()
    lr = 0.1
    one = train.train_on_data(x, y, w, lr=lr, steps=1, checkpoints=[1])
    expected = w - lr * jax.grad(models.mse)(w, x, y)
    assert float(jnp.max(jnp.abs(one.weights[-1] - expected))) < 1e-12


@pytest.mark.slow
def test_online_times_are_steps_times_lr():
    task, _, _, w = _batch()
    run = train.train_online(
        jax.random.PRNGKey(2), task, w[None], lr=0.05, batch=64, steps=4, checkpoints=3, prng="key", dtype=jnp.float64
    )
    np.testing.assert_array_equal(np.asarray(run.times), np.asarray(run.steps) * 0.05)


@pytest.mark.slow
def test_ipr_scale_and_permutation_invariant():
    w = jax.random.normal(jax.random.PRNGKey(3), (50, N), jnp.float64)
    perm = jax.random.permutation(jax.random.PRNGKey(4), N)
    assert float(jnp.max(jnp.abs(metrics.ipr(w) - metrics.ipr(-3.7 * w[:, perm])))) < 1e-15


def test_as_recorded_round_trips_tuples():
    @dataclasses.dataclass(frozen=True)
    class S:
        xi: tuple = (0.3, 0.7)
        n: int = 40

    assert fsim.as_recorded(S()) == {"xi": [0.3, 0.7], "n": 40}
    with pytest.raises(TypeError, match="settings"):
        fsim.as_recorded({"xi": (0.3, 0.7)})
    with pytest.raises(TypeError, match="settings"):
        fsim.as_recorded(S)


def test_paper_scale_record_arrays():
    ps = fsim.paper_scale()
    assert ps.record["command"] == fsim.PAPER_SCALE_COMMAND
    p = len(ps.families[0]["values"]) + len(ps.families[1]["values"])
    for a in (ps.values, ps.excess_kurtosis, ps.mean, ps.std):
        assert a.shape == (p,) and a.dtype == np.float64
    np.testing.assert_allclose(ps.values, [*ex.PAPER_FIG5.gains, *ex.PAPER_FIG5.ks], atol=1e-12)


@pytest.mark.slow
def test_widget_task_clone_is_covariance_task():
    task = fsim._widget_task("Gaussian clone of NLGP", 10.0)
    assert isinstance(task, data.CovarianceTask)
    ref = data.family_task("Gaussian clone of NLGP", 10.0).covariances(N)
    for a, b in zip(task.covariances(N), ref, strict=True):
        np.testing.assert_allclose(np.asarray(a), np.asarray(b), atol=1e-12)
    assert not isinstance(fsim._widget_task("Kur", 6.0), data.CovarianceTask)
    with pytest.raises(TypeError, match="key"):
        fsim.explore_fields(None)


class _Point(NamedTuple):
    width: np.ndarray
    ipr: np.ndarray
    share: np.ndarray
    localized: np.ndarray


def test_localized_median():
    width = np.array([[[5.0, 3.0], [9.0, 7.0], [1.0, 11.0]]])  # (S=1, I=3, C=2)
    p = _Point(width, width / 100, width / 10, np.array([[True, False, True]]))
    assert nzs.localized_median(p, "width") == 7.0  # median of 3 and 11
    assert np.isnan(nzs.localized_median(p._replace(localized=np.zeros((1, 3), bool)), "width"))
    with pytest.raises(ValueError, match="what"):
        nzs.localized_median(p, "height")


def test_near_zero_findings_validates():
    with pytest.raises(TypeError, match="NearZeroEvidence"):
        nzs.near_zero_findings({"record": {}})
