"""Tests for localization.metrics: closed forms of the IPR, shape distance, crossings of sampled curves,
kurtosis estimates, autocovariance and standard errors (field geometry: tests/test_field_analysis.py)."""

import math

import jax
import jax.numpy as jnp
import numpy as np
import pytest

from localization import metrics


# --------------------------------------------------------------------------------------- ipr
@pytest.mark.parametrize("n", [1, 2, 7, 40])
def test_ipr_one_hot_is_one(n):
    w = np.zeros(n)
    w[n // 2] = -3.7
    assert float(metrics.ipr(w)) == pytest.approx(1.0, abs=1e-15)


@pytest.mark.parametrize("n", [2, 5, 40, 900])
def test_ipr_uniform_magnitudes_is_one_over_n(n):
    signs = np.where(np.arange(n) % 3 == 0, -1.0, 1.0)
    assert float(metrics.ipr(2.5 * signs)) == pytest.approx(1.0 / n, rel=1e-13)


def test_ipr_closed_form_two_levels():
    # a entries of value 1 and b of value 0: IPR = a / a^2 = 1/a ; entries u, v: (u^4+v^4)/(u^2+v^2)^2
    w = np.array([1.0, 2.0, 0.0, 0.0])
    assert float(metrics.ipr(w)) == pytest.approx(17.0 / 25.0, rel=1e-14)


@pytest.mark.slow
def test_ipr_scale_invariance_and_batching():
    rng = np.random.default_rng(0)
    w = rng.normal(size=(3, 4, 40))
    base = np.asarray(metrics.ipr(w))
    assert base.shape == (3, 4)
    direct = (w**4).sum(-1) / (w**2).sum(-1) ** 2
    np.testing.assert_allclose(base, direct, rtol=1e-13)
    for c in (1e-200, 1e-3, -7.0, 1e200):
        np.testing.assert_allclose(np.asarray(metrics.ipr(c * w)), base, rtol=1e-12)
    assert np.all((base >= 1 / 40) & (base <= 1))


@pytest.mark.slow
def test_ipr_tiny_float32_weights_do_not_underflow():
    w = jnp.asarray(np.array([1e-12, 2e-12, 0.0, 0.0]), jnp.float32)  # w^4 ~ 1e-48 underflows in float32
    out = metrics.ipr(w)
    assert out.dtype == jnp.float32
    assert float(out) == pytest.approx(17.0 / 25.0, rel=1e-6)


@pytest.mark.slow
def test_ipr_under_jit_and_vmap():
    w = jnp.asarray(np.random.default_rng(1).normal(size=(5, 10)))
    np.testing.assert_allclose(jax.jit(metrics.ipr)(w), metrics.ipr(w), rtol=1e-14)
    np.testing.assert_allclose(jax.vmap(metrics.ipr)(w), metrics.ipr(w), rtol=1e-14)


def test_ipr_zero_vector_raises():
    with pytest.raises(ValueError, match="zero vector"):
        metrics.ipr(np.zeros(5))
    w = np.ones((3, 5))
    w[1] = 0.0
    with pytest.raises(ValueError, match=r"w\[1\] is all zeros"):
        metrics.ipr(w)


def test_ipr_validation():
    with pytest.raises(ValueError, match="w must be finite"):
        metrics.ipr(np.array([1.0, np.nan]))
    with pytest.raises(TypeError, match="w must be an array"):
        metrics.ipr("abc")
    with pytest.raises(ValueError, match="w must have at least 1 axes"):
        metrics.ipr(np.float64(1.0))
    with pytest.raises(ValueError, match="w must have a non-empty last axis"):
        metrics.ipr(np.zeros((3, 0)))
    with pytest.raises(TypeError, match="w must be a real floating-point array"):
        metrics.ipr(np.array([True, False]))


# --------------------------------------------------------------------------------------- normalized_distance
def test_normalized_distance_closed_forms():
    e = np.eye(4)
    assert metrics.normalized_distance(3.0 * e[0], 0.5 * e[0]) == pytest.approx(0.0, abs=1e-15)
    assert metrics.normalized_distance(e[0], -2.0 * e[0]) == pytest.approx(2.0, abs=1e-15)
    assert metrics.normalized_distance(e[0], e[1]) == pytest.approx(math.sqrt(2.0), abs=1e-15)
    # broadcasting over leading axes, scale invariance
    rng = np.random.default_rng(0)
    a, b = rng.normal(size=(3, 5, 7)), rng.normal(size=(3, 5, 7))
    d = metrics.normalized_distance(a, b)
    assert d.shape == (3, 5)
    assert np.allclose(d, metrics.normalized_distance(2.5 * a, 0.1 * b), rtol=0, atol=1e-14)
    # law of cosines: |a^ - b^|^2 = 2 - 2 cos
    cos = np.sum(a * b, -1) / np.linalg.norm(a, axis=-1) / np.linalg.norm(b, axis=-1)
    assert np.allclose(d**2, 2 - 2 * cos, rtol=0, atol=1e-13)


def test_normalized_distance_validation():
    with pytest.raises(ValueError, match="w_a"):
        metrics.normalized_distance(np.zeros(3), np.ones(3))
    with pytest.raises(ValueError, match="w_b"):
        metrics.normalized_distance(np.ones(3), np.zeros(3))
    with pytest.raises(ValueError, match="last axes"):
        metrics.normalized_distance(np.ones(3), np.ones(4))
    with pytest.raises(ValueError, match="w_a must be finite"):
        metrics.normalized_distance(np.array([1.0, np.nan]), np.ones(2))
    with pytest.raises(TypeError, match="w_a"):
        metrics.normalized_distance("x", np.ones(2))


# --------------------------------------------------------------------------------------- curves
def test_first_crossing_up_interpolates_linear_curves():
    t = np.linspace(0.0, 10.0, 11)
    y = np.stack([0.2 * t, 0.05 * t, np.full_like(t, 5.0)])
    out = metrics.first_crossing(t, y, 1.0)
    assert out.shape == (3,)
    assert out[0] == pytest.approx(5.0, abs=1e-12)
    assert np.isnan(out[1])  # reaches only 0.5
    assert out[2] == 0.0  # starts above
    # first crossing, not the last: a curve that goes up, down and up again; one curve -> a float
    z = np.array([0, 2, 0, 2, 0, 0, 0, 0, 0, 0, 0], float)
    r = metrics.first_crossing(t, z, 1.0)
    assert isinstance(r, float) and r == pytest.approx(0.5, abs=1e-12)
    # "up": a curve that starts above the level has reached it at x[0]; "either" finds the way down
    down = 1.0 - 0.1 * t
    assert metrics.first_crossing(t, down, 0.5) == 0.0
    assert metrics.first_crossing(t, down, 0.5, direction="either") == pytest.approx(5.0, abs=1e-12)


def test_first_crossing_either_linear_and_log():
    p = np.array([1.0, 2.0, 4.0, 8.0])
    y = np.array([0.0, 0.0, 1.0, 1.0])
    cross = lambda *a, **k: metrics.first_crossing(*a, direction="either", **k)  # noqa: E731
    assert cross(p, y, 0.5) == pytest.approx(3.0, abs=1e-12)
    assert cross(p, y, 0.5, log=True) == pytest.approx(math.sqrt(8.0), abs=1e-12)
    # decreasing curves cross too; no crossing gives NaN; exact hit returns the grid point
    assert cross(p, 1 - y, 0.25) == pytest.approx(3.5, abs=1e-12)
    assert math.isnan(cross(p, np.zeros(4), 0.5))
    assert cross(p, np.array([0.0, 0.5, 1.0, 1.0]), 0.5) == 2.0
    assert cross(p, np.array([0.5, 0.0, 1.0, 1.0]), 0.5) == 1.0  # starts on the level
    # log interpolation also for "up", row by row
    two = metrics.first_crossing(p, np.stack([y, 2 * y]), 0.5, log=True)
    np.testing.assert_allclose(two, [math.sqrt(8.0), 2.0**1.25], rtol=1e-14)


def test_first_crossing_validation():
    t = np.arange(4.0)
    with pytest.raises(ValueError, match="strictly increasing"):
        metrics.first_crossing(np.array([0.0, 1.0, 1.0, 2.0]), np.zeros(4), 0.5)
    with pytest.raises(ValueError, match="last axis"):
        metrics.first_crossing(t, np.zeros(5), 0.5)
    with pytest.raises(ValueError, match="at least 2"):
        metrics.first_crossing(np.array([1.0]), np.zeros(1), 0.5)
    with pytest.raises(ValueError, match="finite"):
        metrics.first_crossing(t, np.array([0, np.nan, 1, 2.0]), 0.5)
    with pytest.raises(ValueError, match="finite"):
        metrics.first_crossing(t, np.array([0.0, np.inf, 1.0, 2.0]), 0.5, direction="either")
    with pytest.raises(ValueError, match="level"):
        metrics.first_crossing(t, np.zeros(4), math.inf)
    with pytest.raises(ValueError, match="positive when log"):
        metrics.first_crossing(np.array([-1.0, 1.0, 2.0]), np.zeros(3), 0.5, log=True)
    with pytest.raises(ValueError, match="direction"):
        metrics.first_crossing(t, np.zeros(4), 0.5, direction="down")
    with pytest.raises(TypeError, match="log"):
        metrics.first_crossing(t, np.zeros(4), 0.5, log=1)


def test_settling_step():
    assert metrics.settling_step([0.5, 0.5, 0.5], 0.01) == 0
    assert metrics.settling_step([0.0, 0.2, 0.9, 0.95, 0.96], 0.02) == 3
    assert metrics.settling_step([0.0, 1.0], 0.1) == 1  # only the last point: not settled before the end
    with pytest.raises(ValueError, match="tol"):
        metrics.settling_step([0.1, 0.2], 0.0)
    with pytest.raises(ValueError, match="curve"):
        metrics.settling_step(np.zeros((2, 2)), 0.1)


# --------------------------------------------------------------------------------------- kurtosis
def test_kurtosis_closed_forms_exact_samples():
    # Rademacher sample with equal counts: m2 = 1, m4 = 1 -> -2 exactly
    x = np.tile([1.0, -1.0], 50)
    assert float(metrics.sample_excess_kurtosis(x)) == pytest.approx(-2.0, abs=1e-14)
    # three-point law {-1: 1/4, 0: 1/2, 1: 1/4}: m2 = 1/2, m4 = 1/2 -> 2 - 3 = -1
    x = np.array([-1.0, 0.0, 0.0, 1.0] * 25)
    assert float(metrics.sample_excess_kurtosis(x)) == pytest.approx(-1.0, abs=1e-14)
    # shift and scale invariance
    assert float(metrics.sample_excess_kurtosis(3 * x + 7)) == pytest.approx(-1.0, abs=1e-12)


@pytest.mark.slow
def test_kurtosis_of_random_samples_along_axis():
    key = jax.random.key(0)
    k1, k2 = jax.random.split(key)
    g = jax.random.normal(k1, (200_000, 2))
    u = jax.random.uniform(k2, (3, 200_000))
    kg = np.asarray(metrics.sample_excess_kurtosis(g, axis=0))
    ku = np.asarray(metrics.sample_excess_kurtosis(u, axis=-1))
    assert kg.shape == (2,) and ku.shape == (3,)
    # std of the g2 estimator ~ sqrt(24/M) = 0.011 (Gaussian), ~ 0.003 (uniform, exact value -6/5)
    np.testing.assert_allclose(kg, 0.0, atol=0.05)
    np.testing.assert_allclose(ku, -1.2, atol=0.02)


def test_kurtosis_validation():
    with pytest.raises(ValueError, match="at least 2 samples"):
        metrics.sample_excess_kurtosis(np.ones((1, 3)))
    with pytest.raises(ValueError, match="constant"):
        metrics.sample_excess_kurtosis(np.ones(10))
    with pytest.raises(ValueError, match="axis must lie in"):
        metrics.sample_excess_kurtosis(np.ones((3, 3)), axis=2)
    with pytest.raises(TypeError, match="axis must be an int"):
        metrics.sample_excess_kurtosis(np.ones((3, 3)), axis=0.0)
    with pytest.raises(TypeError, match="x must be an array"):
        metrics.sample_excess_kurtosis("x")


# --------------------------------------------------------------------------------------- autocovariance
def _autocorr_direct(x):
    n = x.shape[-1]
    return np.stack([np.mean(x * np.roll(x, -d, axis=-1), axis=-1) for d in range(n)], axis=-1)


def test_circular_autocorr_of_a_constant_is_its_square():
    x = np.full((3, 8), -1.5)
    np.testing.assert_allclose(metrics.circular_autocorr(x), np.full((3, 8), 2.25), rtol=0, atol=1e-14)


@pytest.mark.parametrize("n, k", [(8, 1), (40, 3), (41, 7), (40, 20)])
def test_circular_autocorr_of_a_sinusoid(n, k):
    # x_i = cos(2 pi k i / N + phase): s_d = (1/2) cos(2 pi k d / N) for 0 < k < N/2; at k = N/2 (and
    # phase 0) x is (+-1) alternating, s_d = (-1)^d = cos(pi d)
    i = np.arange(n)
    phase = 0.0 if 2 * k == n else 0.37
    x = np.cos(2 * np.pi * k * i / n + phase)
    expect = (1.0 if 2 * k == n else 0.5) * np.cos(2 * np.pi * k * i / n)
    np.testing.assert_allclose(metrics.circular_autocorr(x), expect, rtol=0, atol=1e-14)


def test_circular_autocorr_matches_the_definition_and_sum_identities():
    rng = np.random.default_rng(5)
    x = rng.normal(size=(4, 3, 17))
    s = metrics.circular_autocorr(x)
    assert s.shape == x.shape and s.dtype == np.float64
    np.testing.assert_allclose(s, _autocorr_direct(x), rtol=0, atol=1e-13)
    # s_0 = mean square; sum_d s_d = (sum_i x_i)^2 / N; symmetry s_d = s_{N-d}
    np.testing.assert_allclose(s[..., 0], np.mean(x**2, axis=-1), rtol=1e-13)
    np.testing.assert_allclose(s.sum(axis=-1), x.sum(axis=-1) ** 2 / 17, rtol=1e-11, atol=1e-12)
    np.testing.assert_allclose(s[..., 1:], s[..., :0:-1], rtol=0, atol=1e-13)
    # a single vector gives the same row as the batch
    np.testing.assert_allclose(metrics.circular_autocorr(x[1, 2]), s[1, 2], rtol=0, atol=1e-15)


def test_circular_autocorr_translation_invariant_and_quadratic():
    rng = np.random.default_rng(6)
    x = rng.normal(size=(5, 12))
    s = metrics.circular_autocorr(x)
    for shift in (1, 5, 11):
        np.testing.assert_allclose(metrics.circular_autocorr(np.roll(x, shift, axis=-1)), s, rtol=0, atol=1e-13)
    np.testing.assert_allclose(metrics.circular_autocorr(-3.0 * x), 9.0 * s, rtol=0, atol=1e-12)
    # float32 and integer input are computed in float64
    assert metrics.circular_autocorr(x.astype(np.float32)).dtype == np.float64
    np.testing.assert_allclose(metrics.circular_autocorr(np.array([1, 2, 3])), [14 / 3, 11 / 3, 11 / 3], rtol=1e-14)


def test_circular_autocorr_validation():
    with pytest.raises(TypeError, match="x must be an array"):
        metrics.circular_autocorr("abc")
    with pytest.raises(TypeError, match="x must be a real floating-point array"):
        metrics.circular_autocorr(np.array([1 + 1j, 2.0]))
    with pytest.raises(ValueError, match="x must have at least 1 axes"):
        metrics.circular_autocorr(np.float64(2.0))
    with pytest.raises(ValueError, match="x must have a non-empty last axis"):
        metrics.circular_autocorr(np.zeros((3, 0)))
    with pytest.raises(ValueError, match="x must be finite"):
        metrics.circular_autocorr(np.array([1.0, np.inf, 0.0]))


# --------------------------------------------------------------------------------------- mean and SE
def test_mean_and_se_hand_computed():
    # samples 1, 2, 3, 6: mean 3, squared deviations 4 + 1 + 0 + 9 = 14
    m, se = metrics.mean_and_se([1.0, 2.0, 3.0, 6.0])
    assert m == 3.0
    assert se == pytest.approx(np.sqrt(14 / 3) / 2, rel=1e-15)
    m0, se0 = metrics.mean_and_se(np.array([1.0, 2.0, 3.0, 6.0]), ddof=0)
    assert m0 == 3.0 and se0 == pytest.approx(np.sqrt(14 / 4) / 2, rel=1e-15)
    # two samples a, b: SE (ddof 1) = |a - b| / 2
    assert metrics.mean_and_se(np.array([-1.0, 4.0]))[1] == pytest.approx(2.5, rel=1e-15)


def test_mean_and_se_per_column_and_constant_columns():
    s = np.array([[1.0, 5.0, 0.0], [3.0, 5.0, 2.0], [5.0, 5.0, 10.0]])
    m, se = metrics.mean_and_se(s)
    assert m.shape == se.shape == (3,)
    np.testing.assert_allclose(m, [3.0, 5.0, 4.0], rtol=1e-15)
    np.testing.assert_allclose(se, [2.0 / np.sqrt(3), 0.0, np.sqrt(28) / np.sqrt(3)], rtol=1e-14)
    m2, se2 = metrics.mean_and_se(s[:, :, None] * np.ones((1, 1, 2)))
    assert m2.shape == se2.shape == (3, 2)
    np.testing.assert_allclose(se2[:, 1], se, rtol=1e-15)


def test_mean_and_se_shift_and_scale():
    rng = np.random.default_rng(7)
    s = rng.normal(size=(50, 4))
    m, se = metrics.mean_and_se(s)
    m2, se2 = metrics.mean_and_se(-2.0 * s + 7.0)
    np.testing.assert_allclose(m2, -2.0 * m + 7.0, rtol=1e-14)
    np.testing.assert_allclose(se2, 2.0 * se, rtol=1e-12)
    # ddof = 1 and ddof = 0 differ by sqrt(M / (M - 1))
    np.testing.assert_allclose(se, metrics.mean_and_se(s, ddof=0)[1] * np.sqrt(50 / 49), rtol=1e-14)


def test_mean_and_se_validation():
    with pytest.raises(TypeError, match="s must be an array"):
        metrics.mean_and_se(None)
    with pytest.raises(TypeError, match="s must be a real floating-point array"):
        metrics.mean_and_se(np.array([True, False]))
    with pytest.raises(ValueError, match="s must have at least 1 axes"):
        metrics.mean_and_se(np.float64(1.0))
    with pytest.raises(ValueError, match=r"s needs at least 2 samples along axis 0, got shape \(1, 3\)"):
        metrics.mean_and_se(np.ones((1, 3)))
    with pytest.raises(ValueError, match="s must be finite"):
        metrics.mean_and_se(np.array([1.0, np.nan]))
    with pytest.raises(ValueError, match=r"ddof must lie in \[0, 3\) for 3 samples, got 3"):
        metrics.mean_and_se(np.ones(3), ddof=3)
    with pytest.raises(ValueError, match="ddof must be an integer >= 0, got -1"):
        metrics.mean_and_se(np.ones(3), ddof=-1)
    with pytest.raises(TypeError, match="ddof must be an integer"):
        metrics.mean_and_se(np.ones(3), ddof=1.0)
