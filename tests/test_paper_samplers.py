"""The paper code's Kur and Ising samplers, reproduced (localization.data.paper_samplers)."""

import math

import jax
import jax.numpy as jnp
import numpy as np
import pytest
from scipy.special import ndtr

from localization import data, metrics
from localization.data import paper_samplers as ps
from localization.data.marginals import kur_normaliser, kur_transform

# Standard deviations printed by the paper's notebooks (commit 5ebb565): figures/fig5.ipynb (k = 3, 4,
# 30) and figures/fig2.ipynb (k = 5), "Approximate standard deviation: ..."
PRINTED = {3: 1.007363924323071, 4: 0.7745461679507035, 5: 0.6950598719782084, 30: 0.580435177819239}


@pytest.mark.parametrize("k", sorted(PRINTED))
def test_normaliser_reproduces_the_printed_values_in_float64(k):
    # same key, generator and arithmetic: equal to one unit in the last place (jnp.std's summation order)
    got = ps.paper_kur_normaliser(k, "float64")
    assert abs(got - PRINTED[k]) <= 2 * math.ulp(PRINTED[k])
    # float32 (JAX's default) does not reproduce them: the notebooks ran in 64-bit mode
    assert abs(ps.paper_kur_normaliser(k, "float32") - PRINTED[k]) > 1e-5


def test_float64_map_is_the_exact_quantile_rescaled():
    # x_code = q_k(Phi(z)) / std = kur_transform(z) * Z_k / std (closed form), up to the rounding of the
    # code's formula: 1 - |2p - 1|**k cancels, relative error ~ 1e-16 / (2 P(Z > |z|)): 1e-12 at |z| <= 4,
    # 1e-7 at |z| = 6
    z = np.linspace(-6.0, 6.0, 2001)
    inner = np.abs(z) <= 4
    for k in (4.5, 5.0, 10.0):
        std = ps.paper_kur_normaliser(k)
        got = np.asarray(ps.paper_kur_map(jnp.asarray(z), k, std))
        want = kur_transform(z, k) * float(kur_normaliser(k)) / std
        np.testing.assert_allclose(got[inner], want[inner], rtol=1e-10, atol=1e-12)
        np.testing.assert_allclose(got, want, rtol=1e-7)


def test_float64_sample_moments_match_closed_form():
    # E[X^2] of the float64 reproduction is (Z_k / std)^2 exactly; 200 000 draws, 5 SE
    k = 10.0
    m = data.PaperKur(1.0, k, precision="float64")
    x = np.asarray(m.sample(jax.random.key(4), 20_000, 10)).ravel()
    target = (float(kur_normaliser(k)) / ps.paper_kur_normaliser(k)) ** 2
    mean, se = metrics.mean_and_se(x**2)
    assert abs(mean - target) < 5 * se
    assert np.isfinite(x).all()


def test_float32_overflow_point():
    # Where the code's float32 map returns inf: p = (1 + erf(z/sqrt 2))/2 rounds to 1 (or 0). With
    # correctly rounded arithmetic that needs erfc(z/sqrt 2) <= 1.5 * 2^-24 (|z| >= 5.35); XLA float32 erf
    # reaches 1 earlier. The first non-finite |z| and the last finite |z| of this build (jit on CPU):
    o = ps.paper_kur_overflow(5.0, "float32")
    assert o["pos_first"] == pytest.approx(5.156229, abs=1e-6)
    assert o["pos_last_finite"] == pytest.approx(5.294704, abs=1e-6)
    assert o["neg_first"] == o["pos_first"] and o["neg_last_finite"] == o["pos_last_finite"]
    # every z beyond the last finite point maps to inf, so the probability lies between the tails
    assert 2 * ndtr(-o["pos_last_finite"]) < o["probability"] < 2 * ndtr(-o["pos_first"])
    # the map is finite just below the first point and inf (with the sign of z) at it
    below = np.nextafter(np.float32(o["pos_first"]), np.float32(0))
    f = jax.jit(ps.paper_kur_map, static_argnums=1)
    zs = jnp.asarray([below, o["pos_first"], -o["pos_first"]], jnp.float32)
    q = np.asarray(f(zs, 5.0, 1.0))
    assert np.isfinite(q[0]) and q[1] == np.inf and q[2] == -np.inf


def test_float64_overflow_is_out_of_reach():
    o = ps.paper_kur_overflow(5.0, "float64")
    assert o["pos_first"] > 8.3 and o["probability"] < 1e-15


def test_nonfinite_policy():
    z = jnp.asarray([[0.5, 6.0, -6.0]], jnp.float32)
    keep = data.PaperKur(1.0, 5.0, nonfinite="keep")
    x = np.asarray(keep.transform(z))
    assert ps.count_nonfinite(x) == 2 and x[0, 1] == np.inf and x[0, 2] == -np.inf
    with pytest.raises(ValueError, match="2 non-finite"):
        data.PaperKur(1.0, 5.0).transform(z)
    with pytest.raises(TypeError, match="nonfinite='keep'"):
        jax.jit(data.PaperKur(1.0, 5.0).transform)(z)
    # jit fuses differently from eager execution: equal up to float32 rounding, the same infinities
    np.testing.assert_allclose(np.asarray(jax.jit(keep.transform)(z)), x, rtol=1e-6)
    with pytest.raises(ValueError, match="nonfinite"):
        data.PaperKur(1.0, 5.0, nonfinite="clip")
    with pytest.raises(ValueError, match="precision"):
        data.PaperKur(1.0, 5.0, precision="float16")
    with pytest.raises(ValueError, match="k"):
        data.PaperKur(1.0, 2.0)
    with pytest.raises(ValueError, match="normaliser"):
        data.PaperKur(1.0, 5.0, normaliser=-1.0)


def test_task_with_paper_kur_uses_the_code_map():
    task = data.LengthscaleTask(
        data.PaperKur(0.3, 5.0, precision="float64"), data.PaperKur(0.7, 5.0, precision="float64")
    )
    x, y = task.sample(jax.random.key(2), 200, 40)
    assert x.shape == (200, 40) and np.isfinite(np.asarray(x)).all()


def test_chain_validation_and_zero_flips():
    with pytest.raises(ValueError, match="precision"):
        ps.paper_metropolis_ising(jax.random.key(0), 1.0, 10, 5, precision="bf16")
    with pytest.raises(ValueError, match="x0"):
        ps.paper_metropolis_ising(jax.random.key(0), 1.0, 10, 5, x0=np.zeros((5, 10)))
    with pytest.raises(ValueError, match="num_flips"):
        ps.paper_metropolis_ising(jax.random.key(0), 1.0, 10, 5, num_flips=-1)
    x = np.asarray(ps.paper_metropolis_ising(jax.random.key(1), 2.0, 10, 20_000, num_flips=0))
    mean, se = metrics.mean_and_se(x[:, 0] * x[:, 1])  # independent uniform spins
    assert abs(mean) < 5 * se


@pytest.mark.slow
def test_float32_chain_does_not_freeze_under_jit():
    # From the all-up state at J = 1.2, N = 100 both Boltzmann weights exp(J sum x_i x_{i-1}) overflow in
    # float32 (J sum = 120 > 88.72), and evaluated one operation at a time their ratio is inf/inf = nan: the
    # chain would never move. Under jit (as the code, ising.py L124-129) XLA's simplifier rewrites
    # exp(a)/exp(b) to exp(a - b), and the chain moves as in float64 (acceptance exp(-4.8) per flip here).
    x0 = np.ones((4, 100))
    x32 = np.asarray(ps.paper_metropolis_ising(jax.random.key(5), 1.2, 100, 4, num_flips=2000, x0=x0))
    assert (x32 == -1).any()
    big = jnp.float32(120.0)
    assert not np.isfinite(np.asarray(jnp.exp(big) / jnp.exp(big - 4.8)))  # eager: overflow


@pytest.mark.slow
def test_chain_is_not_at_equilibrium_after_1000_proposals():
    # J = 1.2, N = 100 (paper Fig. 2): after the code's 1000 proposals the correlation at distances 1..10
    # is more than 5 SE below the exact Ising correlation; after 20 000 proposals (float64) it is within 5 SE
    J, n, num = 1.2, 100, 1000
    exact = data.ising_correlation(J, n, np.arange(n))
    short = np.asarray(ps.paper_metropolis_ising(jax.random.key(6), J, n, num, num_flips=1000))
    c, se = metrics.mean_and_se(metrics.circular_autocorr(short))
    assert np.all((exact - c)[1:11] > 5 * se[1:11])
    long = np.asarray(ps.paper_metropolis_ising(jax.random.key(7), J, n, num, num_flips=20_000, precision="float64"))
    c, se = metrics.mean_and_se(metrics.circular_autocorr(long))
    assert np.all(np.abs(exact - c)[1:] < 5 * se[1:])


@pytest.mark.slow
def test_chain_matches_the_library_chain_in_float64():
    # same Metropolis kernel as data.metropolis_ising (log-ratio form): the nearest-neighbour
    # correlations of 2000 chains of 100 proposals agree within 5 combined SE
    J, n, num = 1.0, 20, 2000
    a = np.asarray(ps.paper_metropolis_ising(jax.random.key(8), J, n, num, num_flips=100, precision="float64"))
    b = np.asarray(data.metropolis_ising(jax.random.key(9), J, n, num, num_flips=100))
    ma, sa = metrics.mean_and_se((a * np.roll(a, 1, axis=1)).mean(axis=1))
    mb, sb = metrics.mean_and_se((b * np.roll(b, 1, axis=1)).mean(axis=1))
    assert abs(ma - mb) < 5 * math.hypot(sa, sb)


def test_paper_ising_model():
    m = data.PaperIsing(1.2)
    x = m.sample(jax.random.key(0), 8, 20)
    assert x.shape == (8, 20) and set(np.unique(np.asarray(x))) <= {-1.0, 1.0}
    assert m.marginal.excess_kurtosis == -2.0
    with pytest.raises(NotImplementedError, match="closed-form"):
        m.covariance(20)
    with pytest.raises(ValueError, match="1-D"):
        m.sample(jax.random.key(0), 8, (4, 5))
    with pytest.raises(ValueError, match="J"):
        data.PaperIsing(-1.0)
