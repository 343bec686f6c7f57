"""localization.field_analysis: closed forms (a cosine of known frequency, a bump at a known site, torus
distances by enumeration, the correlation of a shifted copy), the tie and mean rules, NumPy/JAX, bad input."""

import itertools
import math

import jax
import jax.numpy as jnp
import numpy as np
import pytest

from localization import field_analysis as F
from localization.metrics import ipr

RNG = np.random.default_rng(7)


def _bump(n, centre, sign=1.0):
    i = np.arange(n)
    d = np.minimum(np.abs(i - centre), n - np.abs(i - centre))
    return sign * np.exp(-(d**2) / 4.0)


# ------------------------------------------------------------------------------------------- peaks
def test_peak_position_absolute_signed_ties_and_jax():
    w = np.array([0.1, 0.5, -2.0, 0.3])
    assert int(F.peak_position(w)) == 2
    assert int(F.peak_position(w, signed=True)) == 1
    assert int(F.peak_position(-w)) == 2  # L(w) = L(-w): the unsigned peak of -w is the same site
    np.testing.assert_array_equal(F.peak_position(np.stack([w, np.roll(w, 1)])), [2, 3])
    assert int(F.peak_position(np.array([1.0, -3.0, 3.0, 3.0]))) == 1  # ties: the first site
    assert isinstance(F.peak_position(w), np.ndarray | np.integer)
    got = jax.jit(F.peak_position)(jnp.asarray(np.stack([w, -np.roll(w, 2)])))
    assert isinstance(got, jax.Array) and got.tolist() == [2, 0]


def test_peak_sites_of_a_bump_on_a_ring_and_a_torus():
    positions, signs = F.peak_sites(np.stack([_bump(20, 13), _bump(20, 4, -1.0)]))
    np.testing.assert_array_equal(positions, [[13], [4]])
    np.testing.assert_array_equal(signs, [1.0, -1.0])
    grid = np.zeros((2, 5, 7))
    grid[0, 3, 6], grid[1, 0, 2] = 2.0, -5.0
    positions, signs = F.peak_sites(grid.reshape(2, 35), (5, 7))
    np.testing.assert_array_equal(positions, [[3, 6], [0, 2]])
    np.testing.assert_array_equal(signs, [1.0, -1.0])


def test_peak_agreement_counts_tolerance_and_wraparound():
    n = 20
    sim = np.stack([_bump(n, 3), _bump(n, 0), _bump(n, 10), _bump(n, 5, -1.0)])
    flow = np.stack([_bump(n, 3), _bump(n, 19), _bump(n, 13), _bump(n, 5)])
    r = F.peak_agreement(sim, flow, tol=1)
    assert r.peak1.tolist() == [3, 0, 10, 5] and r.peak2.tolist() == [3, 19, 13, 5]
    assert r.offset.tolist() == [0, 1, 3, 0]  # 0 vs 19 on a ring of 20 is 1 apart
    assert r.exact.tolist() == [True, False, False, True]
    assert (r.count_exact, r.count_within, r.total, r.tol) == (2, 3, 4, 1)
    r0 = F.peak_agreement(sim, flow, tol=0)
    assert r0.count_within == r0.count_exact == 2
    rs = F.peak_agreement(sim, flow, signed=True)  # the negative bump's positive lobe is elsewhere
    assert rs.peak1.tolist()[:3] == [3, 0, 10] and rs.peak1[3] != 5


# ------------------------------------------------------------------------------------------- frequencies
def test_frequency_power_of_pure_modes_and_parseval():
    n = 12
    i = np.arange(n)
    rng = np.random.default_rng(0)
    for k in range(n // 2 + 1):
        w = np.cos(2 * np.pi * k * i / n + (0 if k in (0, n // 2) else rng.uniform(0, 2 * np.pi)))
        p = F.frequency_power(w)
        assert p.shape == (n // 2 + 1,)
        assert abs(p[k] - 1) < 1e-12 and np.all(np.abs(np.delete(p, k)) < 1e-12), k
        assert F.dominant_frequency(w) == k
    p = F.frequency_power(rng.normal(size=(3, 2, 7)))  # odd N: no Nyquist term
    assert p.shape == (3, 2, 4) and np.allclose(p.sum(axis=-1), 1, atol=1e-12)
    # weights 0.6 and 0.8 on the constant and the k = 2 pair give shares 0.36 and 0.64
    mix = 0.6 / np.sqrt(n) + 0.8 * np.sqrt(2 / n) * np.sin(2 * np.pi * 2 * i / n + 0.3)
    p = F.frequency_power(mix)
    assert abs(p[0] - 0.36) < 1e-12 and abs(p[2] - 0.64) < 1e-12
    assert F.dominant_frequency(mix) == 2


def test_the_mean_rule_and_the_tie_rule():
    n = 16
    i = np.arange(n)
    offset_wave = 3.0 + np.cos(2 * np.pi * 5 * i / n + 0.4)  # the mean carries most of ||w||^2
    assert F.dominant_frequency(offset_wave) == 0
    assert F.dominant_frequency(offset_wave, exclude_mean=True) == 5
    # equal shares at k = 2, 3 and 7 (the cosine/sine pair of one frequency counted together): the lowest wins
    tie = sum(np.cos(2 * np.pi * k * i / n + 0.1 * k) for k in (7, 3, 2))
    p = F.frequency_power(tie)
    assert np.allclose(p[[2, 3, 7]], 1 / 3, atol=1e-12)
    assert F.dominant_frequency(tie) == 2 and F.dominant_frequency(tie[::-1].copy()) == 2
    # Nyquist (k = n/2, one real wave) against a pair of equal energy: tied, the lower frequency wins
    nyq = np.cos(np.pi * i) + math.sqrt(2) * np.cos(2 * np.pi * 3 * i / n + 0.2)
    assert np.allclose(F.frequency_power(nyq)[[3, n // 2]], 0.5, atol=1e-12)
    assert F.dominant_frequency(nyq, exclude_mean=True) == 3
    # exactly one element of each conjugate pair holds the share, and the shares sum to 1 on a torus
    for shape in [(6, 6), (4, 9), (5, 7), (2, 3, 4)]:
        w = RNG.normal(size=(4, math.prod(shape)))
        p = F.frequency_power(w, shape)
        assert p.shape == (4, *shape[:-1], shape[-1] // 2 + 1)
        np.testing.assert_allclose(p.reshape(4, -1).sum(-1), 1, atol=1e-12)


def test_dominant_frequency_on_a_torus_against_enumeration():
    r, c = np.meshgrid(np.arange(8), np.arange(6), indexing="ij")
    plane = np.cos(2 * np.pi * (3 * r / 8 - 2 * c / 6) + 0.7).ravel()
    assert F.dominant_frequency(plane, (8, 6)) == pytest.approx(math.sqrt(13))
    assert F.frequency_power(plane, (8, 6)).max() == pytest.approx(1.0, abs=1e-12)
    # the wave of largest energy sum |F_m|^2 + |F_-m|^2 (each pair once), by enumeration
    for shape in [(6, 6), (4, 9), (40,)]:
        for w in RNG.normal(size=(30, math.prod(shape))):
            power = np.abs(np.fft.fftn(w.reshape(shape))) ** 2
            energy = {}
            for m in itertools.product(*map(range, shape)):
                conj = tuple(-a % L for a, L in zip(m, shape, strict=True))
                energy[min(m, conj)] = energy.get(min(m, conj), 0.0) + power[m]
            energy.pop((0,) * len(shape))
            best = max(energy, key=energy.get)
            length = math.sqrt(sum(min(a, L - a) ** 2 for a, L in zip(best, shape, strict=True)))
            assert F.dominant_frequency(w, shape, exclude_mean=True) == pytest.approx(length)


# ------------------------------------------------------------------------------------------- distances
def test_circular_distance_on_a_ring_numpy_and_jax():
    i = np.array([0, 0, 39, 5, 20])
    j = np.array([39, 20, 1, 5, 0])
    np.testing.assert_array_equal(F.circular_distance(i, j, 40), [1, 20, 2, 0, 20])
    got = jax.jit(F.circular_distance, static_argnums=2)(jnp.asarray(i), jnp.asarray(j), 40)
    assert isinstance(got, jax.Array) and got.tolist() == [1, 20, 2, 0, 20]


def test_circular_distance_on_a_torus_by_enumeration():
    shape = (4, 5)
    sites = np.array(list(itertools.product(range(4), range(5))))
    got = F.circular_distance(sites[:, None, :], sites[None, :, :], shape)
    for a, p in enumerate(sites):
        for b, q in enumerate(sites):  # the shortest of the images q + (4 u, 5 v)
            best = min(math.dist(p, q + np.array([4 * u, 5 * t])) for u in (-1, 0, 1) for t in (-1, 0, 1))
            assert got[a, b] == pytest.approx(best, abs=1e-12)


def test_window_share_closed_forms_on_a_ring():
    N, W = 40, 10
    assert F.window_share(np.eye(N)[13], W) == pytest.approx(1.0, abs=1e-12)
    assert F.window_share(np.ones(N), W) == pytest.approx(W / N, abs=1e-12)
    spread = np.zeros(N)
    spread[35:] = 1.0
    spread[:15] = 1.0  # 2W sites evenly, across the boundary
    assert F.window_share(spread, W) == pytest.approx(0.5, abs=1e-12)
    # a sinusoid of mode m: W/N + |sin(2 pi m W/N)| / (N |sin(2 pi m/N)|) with a crest inside a window
    i = np.arange(N)
    for m in (1, 3, 7):
        w = np.cos(2 * np.pi * m * (i - W / 2 + 0.5) / N)
        expected = W / N + abs(math.sin(2 * math.pi * m * W / N)) / (N * abs(math.sin(2 * math.pi * m / N)))
        assert F.window_share(w, W) == pytest.approx(expected, abs=1e-12)


def test_wave_window_share_is_the_best_window_share_of_a_wave():
    # N = 40, W = 10: a crest at a window's centre is the best phase for every mode (to 1e-12);
    # N = 31, W = 7: the largest share over 4001 phases (grid error ~ (pi / 4000)^2 = 6e-7)
    i = np.arange(40)
    modes = np.array([m for m in range(1, 40) if (2 * m) % 40])
    waves = np.cos(2 * np.pi * modes[:, None] * (i[None] - 4.5) / 40)
    np.testing.assert_allclose(F.wave_window_share(modes, 10, 40), F.window_share(waves, 10), rtol=0, atol=1e-12)
    i, modes, phases = np.arange(31), np.arange(1, 31), np.linspace(0, np.pi, 4001)
    waves = np.cos(2 * np.pi * modes[:, None, None] * i / 31 + phases[None, :, None])  # (mode, phase, site)
    best = F.window_share(waves, 7).max(axis=1)
    np.testing.assert_allclose(F.wave_window_share(modes, 7, 31), best, rtol=0, atol=2e-6)
    assert F.wave_window_share(1, 10, 40) == pytest.approx(0.25 + 1 / (40 * math.sin(math.pi / 20)), abs=1e-15)


def test_wave_window_share_refuses_what_is_no_wave():
    with pytest.raises(ValueError, match="2m not divisible by n = 40"):
        F.wave_window_share(20, 10, 40)
    with pytest.raises(ValueError, match="2m not divisible by n = 40"):
        F.wave_window_share([1, 0], 10, 40)
    with pytest.raises(ValueError, match="width must be at most n = 40, got 41"):
        F.wave_window_share(1, 41, 40)
    with pytest.raises(TypeError, match="m must be an integer mode"):
        F.wave_window_share(1.5, 10, 40)
    with pytest.raises((TypeError, ValueError), match="n"):
        F.wave_window_share(1, 1, 2)


def test_window_share_matches_brute_force_on_a_grid_and_keeps_leading_axes():
    shape, W = (6, 5), 3
    w = RNG.normal(size=(2, 3, 30))
    got = F.window_share(w, W, shape)
    assert got.shape == (2, 3)
    p = (w**2).reshape(2, 3, *shape)
    brute = np.zeros((2, 3))
    for r in range(shape[0]):
        for c in range(shape[1]):
            rows, cols = np.arange(r, r + W) % shape[0], np.arange(c, c + W) % shape[1]
            brute = np.maximum(brute, p[..., rows[:, None], cols[None, :]].sum((-1, -2)))
    np.testing.assert_allclose(got, brute / p.sum((-1, -2)), atol=1e-12)
    assert np.all(got >= W * W / 30 - 1e-12)


def test_sign_pairing_on_a_ring_and_a_torus():
    W = np.zeros((3, 20))
    W[0, 4], W[1, 6], W[2, 15] = 2.0, -1.0, 3.0
    pairing = F.sign_pairing(W)
    np.testing.assert_array_equal(pairing.distance, [2.0, 2.0, 9.0])  # 15 -> 6 is 9 sites either way round
    assert pairing.partner.all()
    same = F.sign_pairing(np.abs(W))
    assert not same.partner.any() and np.all(np.isinf(same.distance))  # no opposite sign: +inf, flagged
    G = np.zeros((2, 36))
    G[0, 0], G[1, 5 * 6 + 5] = 1.0, -1.0
    np.testing.assert_allclose(F.sign_pairing(G, (6, 6)).distance, [math.sqrt(2)] * 2)


@pytest.mark.slow
def test_pairing_null_mean_matches_the_exact_ring_value():
    # two peaks of opposite sign, independent and uniform on a ring of n sites: E[d] = sum_d d P(d)
    n, num = 11, 40_000
    exact = np.minimum(np.arange(n), n - np.arange(n)).mean()
    draws = F.pairing_null(jax.random.key(3), [1.0, -1.0], n, num)
    assert draws.shape == (num, 2) and np.array_equal(draws[:, 0], draws[:, 1])
    assert abs(draws[:, 0].mean() - exact) < 5 * draws[:, 0].std() / math.sqrt(num)


@pytest.mark.slow
def test_pairing_null_on_a_torus_and_sign_pairing_keeps_leading_axes():
    shape, num = (4, 3), 40_000
    r, c = np.meshgrid(np.arange(4), np.arange(3), indexing="ij")
    exact = np.sqrt(np.minimum(r, 4 - r) ** 2 + np.minimum(c, 3 - c) ** 2).mean()  # enumerated displacements
    draws = F.pairing_null(jax.random.key(5), [-1.0, 1.0], shape, num)[:, 0]
    assert abs(draws.mean() - exact) < 5 * draws.std() / math.sqrt(num)
    assert np.all(np.isinf(F.pairing_null(jax.random.key(6), [1.0, 1.0, 1.0], shape, 10)))
    W = RNG.normal(size=(2, 3, 5, 12))
    pairing = F.sign_pairing(W, shape)
    assert pairing.distance.shape == pairing.partner.shape == (2, 3, 5)
    for a in range(2):
        for b in range(3):
            np.testing.assert_array_equal(pairing.distance[a, b], F.sign_pairing(W[a, b], shape).distance)
    assert np.array_equal(pairing.partner, np.isfinite(pairing.distance))


def test_tiling_gaps_and_gap_cv():
    np.testing.assert_array_equal(F.tiling_gaps([30, 0, 20, 10], 40), [10, 10, 10, 10])
    np.testing.assert_array_equal(F.tiling_gaps([5, 5, 5, 5], 40), [0, 0, 0, 40])
    np.testing.assert_array_equal(F.tiling_gaps([38, 1, 4], 40), [3, 3, 34])  # across the boundary
    gaps = F.tiling_gaps(RNG.integers(0, 97, 12), 97)
    assert gaps.sum() == 97 and np.all(np.diff(gaps) >= 0)
    assert F.gap_cv([0, 10, 20, 30], 40) == pytest.approx(0.0)
    assert F.gap_cv([5, 5, 5, 5], 40) == pytest.approx(math.sqrt(3))
    cvs = [F.gap_cv(RNG.integers(0, 4000, 10), 4000) for _ in range(2000)]
    assert 0.75 < np.mean(cvs) < 0.95  # uniform peaks: about 1 for many peaks, a bit less for K = 10


# ------------------------------------------------------------------------------------------- correlations
def test_cross_correlate_direct_sum_on_a_ring_and_a_torus():
    w, x = RNG.normal(size=9), RNG.normal(size=9)
    direct = [sum(w[(i - t) % 9] * x[i] for i in range(9)) for t in range(9)]
    np.testing.assert_allclose(F.cross_correlate(w, x), direct, rtol=0, atol=1e-12)
    got = jax.jit(F.cross_correlate)(jnp.asarray(w), jnp.asarray(x))
    assert isinstance(got, jax.Array)
    np.testing.assert_allclose(np.asarray(got), direct, rtol=0, atol=1e-12)
    shape = (3, 4)
    w, x = RNG.normal(size=(2, 12)), RNG.normal(size=(2, 12))
    h = F.cross_correlate(w, x, shape)
    for t in range(12):
        rolled = np.roll(w.reshape(2, *shape), np.unravel_index(t, shape), axis=(-2, -1)).reshape(2, 12)
        np.testing.assert_allclose(h[:, t], (rolled * x).sum(-1), rtol=0, atol=1e-12)


def test_shift_correlation_against_rolls():
    a, b = RNG.normal(size=(3, 11)), RNG.normal(size=(3, 11))
    direct = np.stack([np.sum(a * np.roll(b, s, axis=-1), -1) for s in range(11)], -1)
    direct /= (np.linalg.norm(a, axis=-1) * np.linalg.norm(b, axis=-1))[:, None]
    np.testing.assert_allclose(F.shift_correlation(a, b), direct, rtol=0, atol=1e-12)
    c = F.shift_correlation(a[0], np.roll(a[0], -4))
    assert abs(c[4] - 1) < 1e-12 and np.argmax(c) == 4


def test_aligned_correlation_of_a_shifted_copy_peaks_at_the_shift():
    a = np.array([0.1, 0.5, 1.0, 0.5, 0.1, 0.0, -0.2])
    corr, shift = F.aligned_correlation(a, np.roll(a, 3))
    assert abs(corr - 1) < 1e-12 and shift == 4  # np.roll(np.roll(a, 3), 4) == a on 7 sites
    assert F.aligned_correlation(a, -a).correlation < 0.9
    assert abs(F.aligned_correlation(a, -2.5 * np.roll(a, 2), up_to_sign=True).correlation - 1) < 1e-12
    t = np.arange(40)
    u = np.exp(-0.5 * ((t - 10) / 2.0) ** 2)
    c1, c2 = np.cos(2 * np.pi * t / 40), np.cos(2 * np.pi * 2 * t / 40)
    assert F.aligned_correlation(c2, c1, up_to_sign=True).correlation < 1e-12  # orthogonal modes
    r = F.aligned_correlation(u, RNG.normal(size=(5, 40)), up_to_sign=True).correlation
    assert r.shape == (5,) and np.all((r >= 0) & (r <= 1))
    assert abs(F.within_similarity(np.stack([u, np.roll(u, 5), -np.roll(u, 9)])) - 1) < 1e-12
    # on a torus: a copy translated by (1, 2) on a 3 x 4 grid aligns at the flat shift of (-1, -2)
    g = RNG.normal(size=(3, 4))
    al = F.aligned_correlation(g.ravel(), np.roll(g, (1, 2), axis=(0, 1)).ravel(), (3, 4))
    assert abs(al.correlation - 1) < 1e-12 and al.shift == np.ravel_multi_index((2, 2), (3, 4))


# ------------------------------------------------------------------------------------------- fits
def test_fit_sinusoid_is_the_dft_projection_at_the_dominant_frequency():
    j = np.arange(40)
    w = 2.0 * np.cos(2 * np.pi * 5 * j / 40 + 0.3) + 0.5 * np.cos(2 * np.pi * 2 * j / 40)
    fit = F.fit_sinusoid(w)
    assert fit.frequency == 5 and fit.frequency.dtype == np.int64
    np.testing.assert_allclose([fit.amplitude, fit.phase], [2.0, 0.3], atol=1e-12)
    np.testing.assert_allclose(fit.residual, 0.25 / (4.0 + 0.25), atol=1e-12)  # energies 2²/2 and 0.5²/2
    # batched, the frequency is dominant_frequency's (ties to the lower one) and 1 - residual its share
    tie = np.cos(2 * np.pi * 3 * j / 40) + np.sin(2 * np.pi * 7 * j / 40)
    batch = np.stack([w, 1.5 + 0 * w, np.cos(np.pi * j) - 0.2, tie])
    fits = F.fit_sinusoid(batch.reshape(2, 2, 40))
    assert fits.residual.shape == (2, 2)
    np.testing.assert_array_equal(fits.frequency.ravel(), F.dominant_frequency(batch))
    np.testing.assert_array_equal(fits.frequency.ravel(), [5, 0, 20, 3])
    share = np.take_along_axis(F.frequency_power(batch), fits.frequency.reshape(4, 1), axis=-1)[:, 0]
    np.testing.assert_allclose(fits.residual.ravel(), 1 - share, atol=1e-15)
    np.testing.assert_allclose(fits.amplitude.ravel(), [2.0, 1.5, 1.0, 1.0], atol=1e-12)
    # odd N: every k > 0 has a conjugate wave
    odd = 0.8 * np.cos(2 * np.pi * 4 * np.arange(41) / 41 - 1.0)
    fit = F.fit_sinusoid(odd)
    np.testing.assert_allclose([fit.amplitude, fit.phase, fit.residual], [0.8, -1.0, 0.0], atol=1e-12)


def test_fit_continuous_sinusoid_recovers_a_sinusoid_and_reports_its_error():
    x = np.arange(40.0)
    w = 0.7 * np.sin(2 * np.pi * 0.113 * (x - 3.2)) + 0.05
    fit = F.fit_continuous_sinusoid(w)
    assert fit.relative_error < 1e-8
    assert fit.frequency == pytest.approx(0.113, rel=1e-8) and fit.amplitude == pytest.approx(0.7, rel=1e-8)
    assert fit.offset == pytest.approx(0.05, abs=1e-8)
    noise = 0.02 * RNG.normal(size=40)
    noisy = F.fit_continuous_sinusoid(w + noise)
    expected = np.linalg.norm(noise) / np.linalg.norm(w + noise)
    assert 0.5 * expected < noisy.relative_error < expected  # the fit absorbs a little of the noise


# ------------------------------------------------------------------------------------------- bad input
@pytest.mark.parametrize(
    "call, error, match",
    [
        (lambda: F.peak_position(np.ones(3), signed=1), TypeError, "signed"),
        (lambda: F.peak_position(None), TypeError, "w must be an array"),
        (lambda: F.peak_sites(np.zeros((3, 6))), ValueError, "all-zero"),
        (lambda: F.peak_agreement(np.ones((2, 5)), np.ones((3, 5))), ValueError, "equal shapes"),
        (lambda: F.peak_agreement(np.ones(6), np.ones(6), tol=4), ValueError, "tol"),
        (lambda: F.peak_agreement(np.ones(6), np.ones(6), tol=-1), ValueError, "tol"),
        (lambda: F.peak_agreement(np.ones(6), np.ones(6), tol=1.0), TypeError, "tol"),
        (lambda: F.frequency_power(np.zeros(8)), ValueError, "zero vector"),
        (lambda: F.frequency_power(np.array([1.0, np.inf, 0.0])), ValueError, "finite"),
        (lambda: F.frequency_power(np.ones(1)), ValueError, "at least 2 sites"),
        (lambda: F.dominant_frequency("cosine"), TypeError, "w must be an array"),
        (lambda: F.dominant_frequency(np.ones(4), exclude_mean=1), TypeError, "exclude_mean"),
        (
            lambda: F.dominant_frequency(np.stack([np.ones(8), np.arange(8.0)]), exclude_mean=True),
            ValueError,
            "constant",
        ),
        (lambda: F.dominant_frequency(np.zeros(12), (4, 3), exclude_mean=True), ValueError, "zero"),
        (lambda: F.circular_distance(40, 0, 40), ValueError, "i must lie in"),
        (lambda: F.circular_distance(0, -1, 40), ValueError, "j must lie in"),
        (lambda: F.circular_distance(0.5, 0, 40), TypeError, "i must be integer"),
        (lambda: F.circular_distance(0, 0, 0), ValueError, "n must be an integer >= 1"),
        (lambda: F.circular_distance(0, 0, 4.0), TypeError, "n must be an integer"),
        (lambda: F.circular_distance(np.zeros(3, int), np.zeros(2, int), (3, 3)), ValueError, "coordinates"),
        (lambda: F.window_share(np.ones(10), 11), ValueError, "width"),
        (lambda: F.window_share(np.zeros((2, 10)), 3), ValueError, "all-zero"),
        (lambda: F.window_share(np.ones(10), 3, (3, 3)), ValueError, "prod"),
        (lambda: F.sign_pairing(np.ones((1, 5))), ValueError, "K >= 2"),
        (lambda: F.pairing_null(jax.random.key(0), [1.0, 0.5], 10, 5), ValueError, "signs"),
        (lambda: F.pairing_null(0, [1.0, -1.0], 10, 5), TypeError, "key"),
        (lambda: F.gap_cv([0, 40], 40), ValueError, "positions"),
        (lambda: F.tiling_gaps([1.0, 2.0], 40), ValueError, "positions"),
        (lambda: F.cross_correlate(np.ones(4), np.ones(5)), ValueError, "same N"),
        (lambda: F.shift_correlation(np.ones(4), np.ones(5)), ValueError, "same N"),
        (lambda: F.shift_correlation(np.zeros(4), np.ones(4)), ValueError, "non-zero"),
        (lambda: F.shift_correlation(np.array([1.0, np.inf]), np.ones(2)), ValueError, "finite"),
        (lambda: F.aligned_correlation(np.ones(4), np.ones(4), up_to_sign=1), TypeError, "up_to_sign"),
        (lambda: F.within_similarity(np.ones((1, 5))), ValueError, "W must be"),
        (lambda: F.fit_sinusoid(np.ones(3)), ValueError, "N >= 4"),
        (lambda: F.fit_sinusoid(np.array([1.0, np.nan, 0.0, 0.0])), ValueError, "finite"),
        (lambda: F.fit_sinusoid(np.zeros((2, 6))), ValueError, "all-zero"),
        (lambda: F.fit_sinusoid("cosine"), TypeError, "w must be a real array"),
        (lambda: F.fit_continuous_sinusoid(np.zeros(10)), ValueError, "w must be non-zero"),
        (lambda: F.fit_continuous_sinusoid(np.ones(3)), ValueError, "N >= 4"),
    ],
)
def test_bad_input_is_named(call, error, match):
    with pytest.raises(error, match=match):
        call()


# ------------------------------------------------------------------------------- localized (the definition)
def test_localization_window_holds_a_quarter_of_the_sites():
    assert F.localization_window(40) == 10 and F.localization_window(43) == 10
    assert F.localization_window((20, 12)) == 6  # a 6 x 6 box: a quarter of a 12 x 12 torus
    assert F.localization_window((30, 30)) == 15 and F.localization_window((4, 4, 4)) == 2
    with pytest.raises(ValueError, match="n must have its shortest axis at least"):
        F.localization_window(3)


def test_is_localized_threshold_is_strict_and_at_the_stated_share():
    # N = 40, W = 10: put a share s of ||w||^2 on one window and spread the rest evenly over the others
    def field(s):
        w2 = np.full(40, (1 - s) / 30)
        w2[:10] = s / 10
        return np.sqrt(w2)

    np.testing.assert_allclose(F.localization_share(field(0.8)), 0.8, rtol=1e-12)
    assert not F.is_localized(field(0.8 - 1e-9))
    assert F.is_localized(field(0.8 + 1e-9))
    assert F.LOCALIZED_SHARE == 0.8


def test_no_wave_and_no_gaussian_random_vector_is_localized_but_a_wide_bump_is():
    n = 40
    i = np.arange(n)
    waves = np.stack([np.cos(2 * np.pi * m * i / n + 0.3) for m in range(1, 20)])
    assert not F.is_localized(waves).any()
    noise = np.random.default_rng(3).standard_normal((4000, n))
    assert not F.is_localized(noise).any()
    wide = np.exp(-((i - 20.0) ** 2) / (2 * 5.0**2))  # sigma = 5 sites: IPR about 0.08, near noise
    assert F.is_localized(wide) and float(ipr(wide)) < 0.09


def test_bump_width_of_boxes_and_gaussian_bumps():
    n = 40
    for k in (1, 3, 7, 12):
        box = np.zeros(n)
        box[5 : 5 + k] = 1.0
        assert int(F.bump_width(box, mass=1.0)) == k
        assert int(F.bump_width(np.roll(box, 33), mass=1.0)) == k  # periodic: across the seam too
    i = np.arange(n)
    sigmas = np.array([2.0, 3.0, 5.0])
    bumps = np.exp(-((i - 20.0) ** 2)[None, :] / (2 * sigmas[:, None] ** 2))
    # the 80 % interval of w^2 (deviation sigma/sqrt2) is 2 * 1.2816 * sigma / sqrt2 = 1.81 sigma wide
    np.testing.assert_allclose(F.bump_width(bumps), 1.81 * sigmas, atol=1.0)
    assert int(F.bump_width(np.ones(n))) == 32
    grid = np.zeros((8, 8))
    grid[2:5, 6:8] = 1.0
    grid[2:5, 0] = 1.0  # a 3 x 3 block across the torus' seam
    assert int(F.bump_width(grid.ravel(), (8, 8), mass=1.0)) == 3


def test_localized_bad_input():
    with pytest.raises(ValueError, match="mass must be in"):
        F.bump_width(np.ones(8), mass=0.0)
    with pytest.raises(ValueError, match="all-zero"):
        F.is_localized(np.zeros(8))
    with pytest.raises(ValueError, match="finite"):
        F.localization_share(np.array([1.0, np.nan, 0.0, 0.0]))
