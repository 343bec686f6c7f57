"""Tests for localization.metrics: closed forms of the IPR, peak positions, kurtosis estimates."""

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


def test_ipr_tiny_float32_weights_do_not_underflow():
    w = jnp.asarray(np.array([1e-12, 2e-12, 0.0, 0.0]), jnp.float32)  # w^4 ~ 1e-48 underflows in float32
    out = metrics.ipr(w)
    assert out.dtype == jnp.float32
    assert float(out) == pytest.approx(17.0 / 25.0, rel=1e-6)


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


# --------------------------------------------------------------------------------------- peaks
def test_peak_position_absolute_and_signed():
    w = np.array([0.1, 0.5, -2.0, 0.3])
    assert int(metrics.peak_position(w)) == 2
    assert int(metrics.peak_position(w, signed=True)) == 1
    # odd symmetry L(w) = L(-w): the unsigned peak of -w is the same position
    assert int(metrics.peak_position(-w)) == 2
    batch = np.stack([w, np.roll(w, 1)])
    np.testing.assert_array_equal(np.asarray(metrics.peak_position(batch)), [2, 3])


def test_peak_position_validation():
    with pytest.raises(TypeError, match="signed"):
        metrics.peak_position(np.ones(3), signed=1)
    with pytest.raises(TypeError, match="w must be an array"):
        metrics.peak_position(None)


def test_circular_distance():
    i = np.array([0, 0, 39, 5, 20])
    j = np.array([39, 20, 1, 5, 0])
    np.testing.assert_array_equal(np.asarray(metrics.circular_distance(i, j, 40)), [1, 20, 2, 0, 20])
    with pytest.raises(ValueError, match="i must lie in"):
        metrics.circular_distance(40, 0, 40)
    with pytest.raises(ValueError, match="j must lie in"):
        metrics.circular_distance(0, -1, 40)
    with pytest.raises(TypeError, match="i must be integer"):
        metrics.circular_distance(0.5, 0, 40)
    with pytest.raises(ValueError, match="n must be an integer >= 1"):
        metrics.circular_distance(0, 0, 0)
    with pytest.raises(TypeError, match="n must be an integer"):
        metrics.circular_distance(0, 0, 4.0)


def test_peaks_agree_within_tolerance_on_the_ring():
    n = 10
    a = np.zeros((4, n))
    b = np.zeros((4, n))
    a[:, 0] = 1.0
    for r, pos in enumerate([0, 1, 9, 2]):
        b[r, pos] = 1.0
    np.testing.assert_array_equal(np.asarray(metrics.peaks_agree(a, b)), [True, True, True, False])
    np.testing.assert_array_equal(np.asarray(metrics.peaks_agree(a, b, tolerance=0)), [True, False, False, False])
    with pytest.raises(ValueError, match="tolerance"):
        metrics.peaks_agree(a, b, tolerance=-1)
    with pytest.raises(ValueError, match="w1 and w2"):
        metrics.peaks_agree(a, b[:, :5])


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
    np.testing.assert_allclose(metrics.circular_autocorr(np.array([1, 2, 3])),
                               [14 / 3, 11 / 3, 11 / 3], rtol=1e-14)


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
