"""Identities of the library behind the chapter *Idealized naturalistic data* (``book/data.md``).

The chapter checks the sources' statements (SymPy, quadrature, enumeration, Monte Carlo); these
tests hold what is an identity of the library: one implementation against another, a library
function against a formula, and the validation of the chapter's helpers in
``localization.experiments.data_properties``.
"""

import itertools
import math

import jax
import numpy as np
import pytest
from scipy import special, stats

import localization
from localization import data, prng
from localization.experiments import data_properties as dp

localization.enable_float64()


def _ising_closed_form(J, n, d):
    t = math.tanh(J)
    return (t**d + t ** (n - d)) / (1 + t**n)


def test_covariance_is_the_image_sum_with_the_poisson_spectrum():
    n, m = 40, np.arange(-30, 31)
    for xi in (1.0, 3.0, 15.0):
        cov = np.asarray(data.covariance(xi, n))
        images = np.exp(-((np.arange(n)[:, None] + m * n) ** 2) / xi**2).sum(1)
        row = images / np.exp(-((m * n) ** 2) / xi**2).sum()
        circulant = row[(np.arange(n)[None, :] - np.arange(n)[:, None]) % n]
        G = np.exp(-((np.pi * xi) ** 2) * (np.arange(n)[:, None] / n + m) ** 2).sum(1)
        assert np.max(np.abs(cov - circulant)) < 1e-12
        eig = np.linalg.eigvalsh(cov)
        assert np.max(np.abs(eig - np.sort(n * G / G.sum()))) < 1e-12
        assert eig[0] > -1e-12


def test_ising_covariance_is_the_closed_form():
    for J in (0.3, 0.7):
        row = np.asarray(data.Ising(J=J).covariance(10))[0]
        assert np.max(np.abs(row - [_ising_closed_form(J, 10, d) for d in range(10)])) < 1e-12


def test_nlgp_covariance_is_the_lemma():
    def lemma(g, rho):
        return (2 / np.pi) * np.arcsin(2 * g**2 * rho / (1 + 2 * g**2))

    for xi in (1.0, 3.0):
        for g in (0.01, 3.0, 100.0):
            lib = np.asarray(data.NLGP(xi=xi, gain=g).covariance(40))
            expected = lemma(g, np.asarray(data.covariance(xi, 40))) / lemma(g, 1.0)
            assert np.max(np.abs(lib - expected)) < 1e-10, (xi, g)


def test_nlgp_pair_moment_is_the_lemma():
    g, rho = 3.0, 0.5
    lemma = (2 / np.pi) * np.arcsin(2 * g**2 * rho / (1 + 2 * g**2))
    assert dp.nlgp_pair_moment(g, rho) == pytest.approx(lemma, rel=1e-10)
    with pytest.raises(ValueError, match="rho"):
        dp.nlgp_pair_moment(1.0, 1.5)
    with pytest.raises(ValueError, match="g"):
        dp.nlgp_pair_moment(0.0, 0.5)


def test_kur_excess_kurtosis_is_the_beta_formula():
    def closed(k):
        return k * special.beta(5 / k, 1 - 4 / k) / special.beta(3 / k, 1 - 2 / k) ** 2 - 3

    for k in (4.1, 5.0, 7.7, 30.0):
        assert abs(data.Kur(xi=1.0, k=k).marginal.excess_kurtosis - closed(k)) < 1e-12
    for k in (3.0, 4.0):
        assert math.isinf(data.Kur(xi=1.0, k=k).marginal.excess_kurtosis)


def test_elliptical_kurtoses_are_the_quadratures():
    D, xi = 40, 3.0
    assert dp.sphere_kurtosis_quad(D) == pytest.approx(-6 / (D + 2), abs=1e-10)
    assert abs(data.EllipseSurface(xi=xi).marginal.excess_kurtosis - dp.sphere_kurtosis_quad(D)) < 1e-10
    assert abs(data.RadialElliptical(xi=xi).marginal.excess_kurtosis - dp.radial_kurtosis_quad(D)) < 1e-10
    assert abs(data.StudentT(xi=xi, nu=5.0).marginal.excess_kurtosis - 6.0) < 1e-10
    assert math.isinf(data.StudentT(xi=xi, nu=3.0).marginal.excess_kurtosis)
    with pytest.raises(ValueError, match="dim"):
        dp.sphere_kurtosis_quad(3)


def test_nlgp_kurtosis_quadrature_is_the_library():
    for g in (0.01, 3.0):
        assert abs(dp.nlgp_kurtosis_quad(g) - data.NLGP(xi=1.0, gain=g).marginal.excess_kurtosis) < 1e-9


def _splitmix64(seed, count):
    mask = 2**64 - 1
    words = []
    for i in range(1, count + 1):
        w = (seed + i * 0x9E3779B97F4A7C15) & mask
        w = ((w ^ (w >> 30)) * 0xBF58476D1CE4E5B9) & mask
        w = ((w ^ (w >> 27)) * 0x94D049BB133111EB) & mask
        words.append(w ^ (w >> 31))
    return words


def test_splitmix_words_are_an_independent_splitmix64():
    assert _splitmix64(0, 2) == [0xE220A8397B1DCDAF, 0x6E789E6AA1B965F4]  # the reference's outputs
    key = jax.random.fold_in(jax.random.key(0), 17)
    sm_key = prng.splitmix_key(key)
    w0, w1 = (int(x) for x in np.asarray(jax.random.key_data(key)))
    expected = _splitmix64((w0 << 32) | w1, 8)
    words64 = [int(x) for x in np.asarray(jax.random.bits(sm_key, (8,), np.uint64))]
    words32 = [int(x) for x in np.asarray(jax.random.bits(sm_key, (16,), np.uint32))]
    assert words64 == expected
    assert words32 == [h for w in expected for h in (w & 0xFFFFFFFF, w >> 32)]
    for derive in (lambda k: jax.random.split(k)[1], lambda k: jax.random.fold_in(k, 7)):
        np.testing.assert_array_equal(jax.random.key_data(derive(sm_key)), jax.random.key_data(derive(key)))


def test_s1_mixing_agrees_with_enumeration():
    """At N = 12 the Markov reduction (two end spins) equals alpha over all configurations of the block."""
    rows = dp.ising_s1_mixing(0.7, 0.25, ns=(12,))
    states = np.array(list(itertools.product([1, -1], repeat=12)))
    weight = np.exp(0.7 * np.sum(states * np.roll(states, -1, axis=1), axis=1))
    weight /= weight.sum()
    for (first, last), name in zip(dp.s1_blocks(12), ("paper", "circular"), strict=True):
        law = {}
        for state, w in zip(states, weight, strict=True):
            key = (int(state[0]), *map(int, state[first : last + 1]))
            law[key] = law.get(key, 0.0) + w
        assert abs(float(dp.alpha_first_vs_rest(law)) - float(rows[12][name])) < 1e-12
    assert abs(rows[12]["corr"] - rows[12]["closed"]) < 1e-25


def test_s1_helpers_validate():
    assert dp.s1_blocks(40) == ((10, 39), (11, 29))
    with pytest.raises(ValueError, match="rho"):
        dp.s1_blocks(40, 0.5)
    with pytest.raises(ValueError, match="sites"):
        dp.ising_ring_law(0.7, (3, 1), 10)
    with pytest.raises(ValueError, match="J"):
        dp.ising_ring_law(-0.1, (0, 1), 10)
    with pytest.raises(ValueError, match="law"):
        dp.alpha_first_vs_rest({(1,): 1.0})
    law = dp.ising_ring_law(0.0, (0, 5), 10, dps=30)  # J = 0: independent spins
    assert all(abs(p - 0.25) < 1e-25 for p in law.values())
    assert dp.alpha_first_vs_rest(law) < 1e-25


def test_enumerate_ising_and_wrapped_spectrum():
    states, w = dp.enumerate_ising(0.7, 6)
    assert states.shape == (64, 6) and abs(w.sum() - 1) < 1e-15
    corr = np.sum(w * states[:, 0] * states[:, 2])
    assert abs(corr - _ising_closed_form(0.7, 6, 2)) < 1e-12
    with pytest.raises(ValueError, match="sign"):
        dp.enumerate_ising(0.7, 6, sign=2.0)
    with pytest.raises(ValueError, match="n"):
        dp.enumerate_ising(0.7, 20)
    exact = np.array([float(x) for x in dp.wrapped_kernel_spectrum(3.0, 40, dps=30)])
    wrapped, periodised = dp.kernel_spectra((3.0,), 40)[3.0]
    assert np.max(np.abs(exact - wrapped)) < 1e-12
    assert np.all(np.diff(periodised) >= 0)


def test_ks_distance_is_scipys():
    x = np.sort(np.random.default_rng(0).normal(size=500))
    assert dp.ks_distance(special.ndtr(x)) == pytest.approx(stats.kstest(x, "norm").statistic, abs=1e-15)
    with pytest.raises(ValueError, match="cdf_sorted"):
        dp.ks_distance([1.5])


def test_kurtosis_table_and_markdown():
    rows = dp.kurtosis_table()
    disagree = sorted(f"{r['model']} {r['parameter']}" for r in rows if dp.verdict(r) == "disagrees")
    assert disagree == ["Kur $k = 3$", "Kur $k = 4$", "NLGP $g = 0.01$"]
    table = dp.kurtosis_markdown(rows)
    assert table.count("\n") == len(rows) + 1 and "**disagrees**" in table
    props = {"m": dict(s3=1.0, s2=2.0, alpha=[(0.1, 0.01), (0.0, 0.0)], corr=0.5)}
    assert "event trivial" in dp.property_markdown(props)
