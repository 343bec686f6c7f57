"""localization.population: closed forms, properties and bad input."""

import math

import jax
import numpy as np
import pytest

from localization import population as pop

RNG = np.random.default_rng(7)


def test_window_share_closed_forms_on_a_ring():
    N, W = 40, 10
    assert pop.window_share(np.eye(N)[13], W) == pytest.approx(1.0, abs=1e-12)
    assert pop.window_share(np.ones(N), W) == pytest.approx(W / N, abs=1e-12)
    spread = np.zeros(N)
    spread[35:] = 1.0
    spread[:15] = 1.0  # 2W sites evenly, across the boundary
    assert pop.window_share(spread, W) == pytest.approx(0.5, abs=1e-12)
    # a sinusoid of mode m: W/N + |sin(2 pi m W/N)| / (N |sin(2 pi m/N)|) with a crest inside a window
    i = np.arange(N)
    for m in (1, 3, 7):
        w = np.cos(2 * np.pi * m * (i - W / 2 + 0.5) / N)
        expected = W / N + abs(math.sin(2 * math.pi * m * W / N)) / (N * abs(math.sin(2 * math.pi * m / N)))
        assert pop.window_share(w, W) == pytest.approx(expected, abs=1e-12)


def test_window_share_matches_brute_force_on_a_grid_and_keeps_leading_axes():
    shape, W = (6, 5), 3
    w = RNG.normal(size=(2, 3, 30))
    got = pop.window_share(w, W, shape)
    assert got.shape == (2, 3)
    p = (w**2).reshape(2, 3, *shape)
    brute = np.zeros((2, 3))
    for r in range(shape[0]):
        for c in range(shape[1]):
            rows, cols = np.arange(r, r + W) % shape[0], np.arange(c, c + W) % shape[1]
            brute = np.maximum(brute, p[..., rows[:, None], cols[None, :]].sum((-1, -2)))
    np.testing.assert_allclose(got, brute / p.sum((-1, -2)), atol=1e-12)
    assert np.all(got >= W * W / 30 - 1e-12)


def test_dominant_mode_ring_and_grid():
    N = 40
    i = np.arange(N)
    waves = np.stack([np.sin(2 * np.pi * m * i / N + 0.3) + 0.1 for m in (1, 5, 20)])
    np.testing.assert_array_equal(pop.dominant_mode(waves), [1, 5, 20])
    r, c = np.meshgrid(np.arange(8), np.arange(6), indexing="ij")
    plane = np.cos(2 * np.pi * (3 * r / 8 - 2 * c / 6)).ravel()
    assert pop.dominant_mode(plane, (8, 6)) == pytest.approx(math.sqrt(13))


def test_peak_sites_and_sign_pairing():
    N = 20
    W = np.zeros((3, N))
    W[0, 4], W[1, 6], W[2, 15] = 2.0, -1.0, 3.0
    positions, signs = pop.peak_sites(W)
    np.testing.assert_array_equal(positions[:, 0], [4, 6, 15])
    np.testing.assert_array_equal(signs, [1, -1, 1])
    pairing = pop.sign_pairing(W)
    np.testing.assert_array_equal(pairing.distance, [2.0, 2.0, 9.0])  # 15 -> 6 is 9 sites either way round
    assert pairing.partner.all()
    same = pop.sign_pairing(np.abs(W))
    assert not same.partner.any() and np.all(np.isinf(same.distance))  # no opposite sign: +inf, flagged
    # on a torus: Euclidean distance with wrap-around
    G = np.zeros((2, 36))
    G[0, 0], G[1, 5 * 6 + 5] = 1.0, -1.0
    np.testing.assert_allclose(pop.sign_pairing(G, (6, 6)).distance, [math.sqrt(2)] * 2)


def test_pairing_null_mean_matches_the_exact_ring_value():
    # Two peaks of opposite sign, independent and uniform on a ring of N sites: E[d] = sum_d d P(d).
    N, num = 11, 40_000
    d = np.minimum(np.arange(N), N - np.arange(N))
    exact = d.mean()
    draws = pop.pairing_null(jax.random.key(3), [1.0, -1.0], N, num)
    assert draws.shape == (num, 2) and np.array_equal(draws[:, 0], draws[:, 1])
    se = draws[:, 0].std() / math.sqrt(num)
    assert abs(draws[:, 0].mean() - exact) < 5 * se


def test_pairing_null_on_a_torus_and_sign_pairing_keeps_leading_axes():
    # K = 2 opposite signs, uniform on a 4 x 3 torus: E[d] = mean Euclidean torus length of a uniform
    # displacement (enumerated).
    shape, num = (4, 3), 40_000
    r, c = np.meshgrid(np.arange(4), np.arange(3), indexing="ij")
    exact = np.sqrt(np.minimum(r, 4 - r) ** 2 + np.minimum(c, 3 - c) ** 2).mean()
    draws = pop.pairing_null(jax.random.key(5), [-1.0, 1.0], shape, num)[:, 0]
    assert abs(draws.mean() - exact) < 5 * draws.std() / math.sqrt(num)
    # three of one sign and none of the other: every distance +inf in every draw
    assert np.all(np.isinf(pop.pairing_null(jax.random.key(6), [1.0, 1.0, 1.0], shape, 10)))
    W = RNG.normal(size=(2, 3, 5, 12))
    pairing = pop.sign_pairing(W, shape)
    assert pairing.distance.shape == pairing.partner.shape == (2, 3, 5)
    for a in range(2):
        for b in range(3):
            np.testing.assert_array_equal(pairing.distance[a, b], pop.sign_pairing(W[a, b], shape).distance)
    assert np.array_equal(pairing.partner, np.isfinite(pairing.distance))


def test_tiling_gaps_hand_cases():
    np.testing.assert_array_equal(pop.tiling_gaps([30, 0, 20, 10], 40), [10, 10, 10, 10])
    np.testing.assert_array_equal(pop.tiling_gaps([5, 5, 5, 5], 40), [0, 0, 0, 40])
    np.testing.assert_array_equal(pop.tiling_gaps([38, 1, 4], 40), [3, 3, 34])  # across the boundary
    gaps = pop.tiling_gaps(RNG.integers(0, 97, 12), 97)
    assert gaps.sum() == 97 and np.all(np.diff(gaps) >= 0)


def test_gap_cv():
    assert pop.gap_cv([0, 10, 20, 30], 40) == pytest.approx(0.0)
    assert pop.gap_cv([5, 5, 5, 5], 40) == pytest.approx(math.sqrt(3))
    cvs = [pop.gap_cv(RNG.integers(0, 4000, 10), 4000) for _ in range(2000)]
    assert 0.75 < np.mean(cvs) < 0.95  # uniform peaks: about 1 for many peaks, a bit less for K = 10


def test_bad_input_is_named():
    with pytest.raises(ValueError, match="width"):
        pop.window_share(np.ones(10), 11)
    with pytest.raises(ValueError, match="all-zero"):
        pop.window_share(np.zeros((2, 10)), 3)
    with pytest.raises(ValueError, match="prod"):
        pop.window_share(np.ones(10), 3, (3, 3))
    with pytest.raises(ValueError, match="finite"):
        pop.dominant_mode(np.array([1.0, np.nan, 2.0]))
    with pytest.raises(ValueError, match="K >= 2"):
        pop.sign_pairing(np.ones((1, 5)))
    with pytest.raises(ValueError, match="signs"):
        pop.pairing_null(jax.random.key(0), [1.0, 0.5], 10, 5)
    with pytest.raises(TypeError, match="key"):
        pop.pairing_null(0, [1.0, -1.0], 10, 5)
    with pytest.raises(ValueError, match="positions"):
        pop.gap_cv([0, 40], 40)
    with pytest.raises(ValueError, match="positions"):
        pop.tiling_gaps([1.0, 2.0], 40)
    with pytest.raises(ValueError, match="constant"):
        pop.dominant_mode(np.stack([np.ones(8), np.arange(8.0)]))
    with pytest.raises(ValueError, match="constant"):
        pop.dominant_mode(np.zeros(12), (4, 3))
    with pytest.raises(ValueError, match="all-zero"):
        pop.peak_sites(np.zeros((3, 6)))


def test_shift_correlation_against_rolls_and_bad_input():
    """Entry s is the cosine similarity with np.roll(b, s) (direct sums, 1e-12); 1 at the aligning shift."""
    rng = np.random.default_rng(4)
    a, b = rng.normal(size=(3, 11)), rng.normal(size=(3, 11))
    direct = np.stack([np.sum(a * np.roll(b, s, axis=-1), -1) for s in range(11)], -1)
    direct /= (np.linalg.norm(a, axis=-1) * np.linalg.norm(b, axis=-1))[:, None]
    np.testing.assert_allclose(pop.shift_correlation(a, b), direct, rtol=0, atol=1e-12)
    c = pop.shift_correlation(a[0], np.roll(a[0], -4))
    assert abs(c[4] - 1) < 1e-12 and np.argmax(c) == 4
    with pytest.raises(ValueError, match="same N"):
        pop.shift_correlation(np.ones(4), np.ones(5))
    with pytest.raises(ValueError, match="non-zero"):
        pop.shift_correlation(np.zeros(4), np.ones(4))
    with pytest.raises(ValueError, match="finite"):
        pop.shift_correlation(np.array([1.0, np.inf]), np.ones(2))
