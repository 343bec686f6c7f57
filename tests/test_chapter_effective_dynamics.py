"""Library identities the effective-dynamics chapter relies on (``book/effective_dynamics.md``).

The chapter checks the sources' statements and its own findings; what is an identity of the
library (one implementation against another, a function against its formula, validation) is
tested here.
"""

import math

import jax
import numpy as np
import pytest

from localization import data, initialisation, metrics, theory, train
from localization.experiments import effective_dynamics as cmp
from localization.experiments import flow_agreement as fa
from localization.experiments import flow_breakdown as fb
from localization.experiments import kurtosis_threshold as kt
from localization.theory import evaluate_amplifier

N = 40
XI = (1.0, 3.0)


@pytest.fixture(scope="module")
def kur5():
    return data.LengthscaleTask.of(data.Kur, xi=XI, k=5.0)


@pytest.fixture(scope="module")
def w_rand():
    return initialisation.init_weights(jax.random.key(0), N)


def test_integrate_effective_times_are_train_checkpoints(kur5, w_rand):
    # The flow is recorded at the SGD run's checkpoints, t = steps * lr.
    s0, s1 = kur5.covariances(N)
    phi = theory.amplifier_taylor(kur5.model1.marginal)
    flow = theory.integrate_effective(w_rand, phi, s0, s1, lr=0.05, steps=40, checkpoints=[0, 1, 40])
    assert np.array_equal(np.asarray(flow.times), train.checkpoint_steps([0, 1, 40], 40) * 0.05)


@pytest.mark.parametrize(
    "marginal",
    [data.Ising(0.7).marginal, data.NLGP(1.0, 100.0).marginal, data.Kur(1.0, 5.0).marginal],
    ids=["ising", "nlgp100", "kur5"],
)
def test_tabulated_amplifier_matches_quadrature(marginal):
    # The chapter's flows use phi tabulated on 4097 points; off the nodes it is within 1e-6.
    a = np.clip(np.linspace(-1, 1, 1001) + 1.7e-4 * np.sin(np.arange(1001)), -1, 1)
    phi = theory.amplifier_of(marginal)
    err = np.max(np.abs(np.asarray(theory.tabulate_amplifier(phi)(a)) - evaluate_amplifier(phi, a)))
    assert err < 1e-6, err


@pytest.mark.parametrize("task", list(fa.fig3_tasks()))
def test_amplifier_taylor_is_eq_eff_taylor(task):
    # Eq. (eff-taylor): sqrt(2/pi) [a + (3 - E X^4) a^3 / 6], to rounding.
    m = fa.fig3_tasks()[task].model1.marginal
    a = np.array([-0.5, 0.01, 0.1, 0.9])
    phi3 = math.sqrt(2 / math.pi) * (a + (3 - m.fourth_moment) * a**3 / 6)
    assert np.max(np.abs(evaluate_amplifier(theory.amplifier_taylor(m), a) - phi3)) < 1e-14


@pytest.mark.parametrize("name", ["NLGP(0.01)", "Kur(5)"])
def test_fig3a_amplifier_is_the_paper_codes_step(name):
    # fig3a.py's simulate_kurtosis, written out line by line for 20 steps, is the library's Euler
    # step of Eq. (eff-flow) with phi = cmp.fig3a_amplifier = 2 f.
    task = fa.fig3_tasks()[name]
    marg = task.model1.marginal
    s0, s1 = (np.asarray(x) for x in task.covariances(N))
    kappa = marg.fourth_moment / marg.variance**2
    w0 = np.asarray(fa.initial_weights(jax.random.key(2))[0], dtype=np.float64)
    w = w0
    for _ in range(20):
        sw1, sw0 = s1 @ w, s0 @ w
        a = sw1 / np.sqrt(sw1 @ w)
        w = w + 0.05 * (math.sqrt(2 / math.pi) * a + (3 - kappa) / 6 * a**3 - (sw0 + sw1) / 2)
    lib = theory.integrate_effective(w0, cmp.fig3a_amplifier(marg), s0, s1, lr=0.05, steps=20, checkpoints=[20])
    assert np.max(np.abs(np.asarray(lib.weights[-1]) - w)) < 1e-12


def test_normalized_distance_is_eq_eff_distance():
    # Eq. (eff-distance) = sqrt(2 - 2 cos(angle)) for random pairs.
    u, w = np.asarray(jax.random.normal(jax.random.key(1), (2, 64, N)))
    cos = np.sum(u * w, -1) / np.linalg.norm(u, axis=-1) / np.linalg.norm(w, axis=-1)
    assert np.max(np.abs(metrics.normalized_distance(u, w) - np.sqrt(2 - 2 * cos))) < 1e-13


def test_circulant_spectrum_and_elasticity(kur5):
    s0, s1, lam1, mu = fa.circulant_spectrum(kur5, N)
    assert np.allclose(np.sort(lam1), np.linalg.eigvalsh(s1), atol=1e-10)
    assert np.allclose(np.sort(mu), np.linalg.eigvalsh(s0 + s1), atol=1e-10)
    # rho = 1 for a linear phi, and phi(a0) is returned
    lin = theory.CubicTaylor(math.sqrt(2 / math.pi), 0.0)
    rho, v0 = fa.amplifier_elasticity(lin, 0.3)
    assert abs(rho - 1) < 1e-9 and abs(v0 - 0.3 * math.sqrt(2 / math.pi)) < 1e-14
    with pytest.raises(TypeError, match="task"):
        fa.circulant_spectrum(object(), N)
    with pytest.raises(ValueError, match="a0"):
        fa.amplifier_elasticity(lin, 1.0)


def test_measures_validation():
    with pytest.raises(TypeError, match="first"):
        fa.fig3_measures({"x": 1})
    with pytest.raises(TypeError, match="runs"):
        fa.mode_statistics([], np.ones((2, N)))
    with pytest.raises(TypeError, match="Breakdown"):
        fb.breakdown_measures(object())
    with pytest.raises(TypeError, match="PeakCount"):
        fa.peak_measures(object())
    with pytest.raises(TypeError, match="tasks"):
        cmp.drift_test(jax.random.key(0), {}, np.ones(N))
    with pytest.raises(ValueError, match="one weight vector"):
        cmp.drift_test(jax.random.key(0), {"k": data.LengthscaleTask.of(data.Kur, xi=XI, k=5.0)}, np.ones((2, N)))


def test_excess_kurtosis_at():
    assert math.isnan(kt.excess_kurtosis_at("Kur", math.nan))
    assert kt.excess_kurtosis_at("NLGP", 3.0) < 0
    k_star = data.kur_excess_kurtosis_zero()
    assert kt.excess_kurtosis_at("Kur", k_star - 0.1) > 0 > kt.excess_kurtosis_at("Kur", k_star + 0.1)
    with pytest.raises(ValueError, match="family"):
        kt.excess_kurtosis_at("Gauss", 1.0)


def test_gaussian_spectra_two_routes_agree():
    # The exercises' check takes the Gaussian covariances' spectra as the circulant eigenvalues of
    # data.Gaussian(xi).covariance(n) (spectral.circulant_eigenvalues of the first row); they are the
    # kernel's eigenvalues of the Poisson-dual series, spectral.eigenvalues, and those of the matrix.
    for xi in (0.3, 1.0, 3.0):
        for n in (20, 40, 640):
            cov = np.asarray(data.Gaussian(xi).covariance(n))
            lam = data.spectral.circulant_eigenvalues(cov[0])
            assert np.max(np.abs(lam - data.spectral.eigenvalues(xi, n))) < 1e-14, (xi, n)
            if n <= 40:
                assert np.allclose(np.sort(lam), np.linalg.eigvalsh(cov), rtol=0, atol=1e-12)


def test_builder_inputs_are_validated():
    with pytest.raises(ValueError, match="batch"):
        fa.fig3_runs(jax.random.key(0), np.ones((2, N)), {"Ising": 10}, modes_key=jax.random.key(1))
    with pytest.raises(TypeError, match="Fig3Runs"):
        fa.peak_count(jax.random.key(0), (1, 2))
    with pytest.raises(ValueError, match="settings"):
        fb.breakdown(jax.random.key(0), {"n": 40}, w0_key=jax.random.key(1), replica_key=jax.random.key(2))
    with pytest.raises(TypeError, match="BreakdownMeasures"):
        fb.breakdown_summary(fb.Breakdown(*[None] * 14), object())
