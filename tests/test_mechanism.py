"""localization.theory.mechanism: every formula against automatic differentiation of the flow."""

import jax
import jax.numpy as jnp
import numpy as np
import pytest

from localization import data, theory
from localization.theory import mechanism as mech

N = 24
C = mech.GAUSSIAN_SLOPE


def _field(w, phi, s0, s1):
    f = phi.core if isinstance(phi, theory.PytreeAmplifier) else phi
    a = s1 @ w / jnp.sqrt(w @ s1 @ w)
    return 0.5 * (f(a) - (s0 + s1) @ w)


def _jacobian_in_basis(w, phi, s0, s1, basis):
    J = np.asarray(jax.jacfwd(lambda x: _field(x, phi, s0, s1))(jnp.asarray(w)))
    return basis.T @ J @ basis


@pytest.fixture(scope="module")
def nlgp():
    task = data.LengthscaleTask.of(data.NLGP, xi=(1.0, 2.5), gain=3.0)
    return task.covariances(N), theory.amplifier_of(task.model1.marginal)


def test_spectra_diagonalise_and_reject_non_circulant(nlgp):
    (s0, s1), _ = nlgp
    sp = mech.circulant_spectra(s0, s1)
    for lam, s in ((sp.lam0, s0), (sp.lam1, s1)):
        assert np.allclose(sp.basis @ np.diag(lam) @ sp.basis.T, s, atol=1e-12)
    bad = s1.copy()
    bad[0, 1] = bad[1, 0] = bad[0, 1] + 0.1
    with pytest.raises(ValueError, match="cov1 must be circulant"):
        mech.circulant_spectra(s0, bad)
    with pytest.raises(ValueError, match="equal shapes"):
        mech.circulant_spectra(s0, s1[:-1, :-1])
    # a symmetric circulant that is not a covariance: lowering the diagonal below the smallest eigenvalue
    shifted = s1 - (sp.lam1.min() + 1e-3 * sp.lam1.max()) * np.eye(len(s1))
    with pytest.raises(ValueError, match="cov1 must be positive semi-definite"):
        mech.circulant_spectra(s0, shifted)
    edge = s1 - sp.lam1.min() * np.eye(len(s1))  # singular (smallest eigenvalue 0 up to rounding): accepted
    assert mech.circulant_spectra(s0, edge).lam1.min() == pytest.approx(0.0, abs=1e-12)


@pytest.mark.slow
def test_linear_rates_match_jacobian(nlgp):
    (s0, s1), _ = nlgp
    sp = mech.circulant_spectra(s0, s1)
    linear = lambda a: C * a  # noqa: E731
    for j in np.flatnonzero(sp.lam1 > 1e-2):
        w = mech.single_mode_amplitude(sp.lam0[j], sp.lam1[j]) * sp.basis[:, j]
        assert np.max(np.abs(np.asarray(_field(w, linear, s0, s1)))) < 1e-12
        JQ = _jacobian_in_basis(w, linear, s0, s1, sp.basis)
        assert np.allclose(JQ, np.diag(mech.linear_mode_rates(sp.lam0, sp.lam1, j)), atol=1e-12)
    # a wrong sign convention (r(k) - r(j)) fails
    rates = mech.linear_mode_rates(sp.lam0, sp.lam1, 0)
    assert np.all(np.delete(rates, 0) <= 0) and rates[1] < 0


@pytest.mark.slow
def test_constant_mode_stability_matches_jacobian(nlgp):
    (s0, s1), phi = nlgp
    sp = mech.circulant_spectra(s0, s1)
    for amp in (phi, theory.Amplifier.gaussian()):
        st = mech.constant_mode_stability(amp, s0, s1)
        w = st.amplitude * np.ones(N)
        assert np.max(np.abs(np.asarray(_field(w, amp, s0, s1)))) < 1e-12
        assert np.allclose(_jacobian_in_basis(w, amp, s0, s1, sp.basis), np.diag(st.rates), atol=1e-12)
    gauss = mech.constant_mode_stability(theory.Amplifier.gaussian(), s0, s1)
    assert gauss.elasticity == pytest.approx(1.0, abs=1e-12)
    assert np.allclose(gauss.rates, mech.linear_mode_rates(sp.lam0, sp.lam1, 0), atol=1e-12)
    assert mech.constant_mode_stability(phi, s0, s1).elasticity > 1  # NLGP(3): super-linear


@pytest.mark.slow
def test_ipr_split_sums_to_rate_and_is_a_covariance_at_fourier_modes(nlgp):
    (s0, s1), phi = nlgp
    sp = mech.circulant_spectra(s0, s1)
    w = np.asarray(jax.random.normal(jax.random.key(3), (4, N), dtype=np.float64))
    lin, nl = mech.ipr_rate_split(w, phi, s0, s1)
    assert lin.shape == nl.shape == (4,)
    ipr = lambda x: jnp.sum(x**4) / jnp.sum(x**2) ** 2  # noqa: E731
    direct = np.array([float(jax.grad(ipr)(jnp.asarray(x)) @ _field(x, phi, s0, s1)) for x in w])
    assert np.allclose(lin + nl, direct, atol=1e-12)
    # a linear phi has no second part
    assert np.allclose(mech.ipr_rate_split(w, lambda a: C * a, s0, s1)[1], 0.0, atol=1e-15)
    for k in range(1, 6):
        wk = 2.0 * sp.basis[:, k]  # norm 2
        lk, nk = mech.ipr_rate_split(wk, phi, s0, s1)
        a = np.asarray(theory.amplifier_argument(wk, s1))
        p = wk**2 / 4.0
        cov = np.sqrt(sp.lam1[k]) * np.sum(p * (p - np.sum(p**2)) * mech.effective_gain(phi, a))  # 2/||w|| = 1
        assert abs(lk) < 1e-12 and nk == pytest.approx(cov, abs=1e-12) and nk > 0


def test_validation(nlgp):
    (s0, s1), phi = nlgp
    with pytest.raises(ValueError, match="column must be in"):
        mech.linear_mode_rates(np.ones(4), np.ones(4), 4)
    with pytest.raises(ValueError, match="lam1 must be finite and > 0"):
        mech.linear_mode_rates(np.ones(4), np.array([1.0, 0.0, 1.0, 1.0]), 0)
    with pytest.raises(ValueError, match="lam1"):
        mech.single_mode_amplitude(1.0, 0.0)
    with pytest.raises(ValueError, match="a must be finite, in"):
        mech.effective_gain(phi, np.array([0.0, 0.5]))
    with pytest.raises(TypeError, match="phi must be callable"):
        mech.constant_mode_stability(3.0, s0, s1)
    with pytest.raises(ValueError, match="unit diagonal"):
        mech.constant_mode_stability(phi, s0, 2 * s1)
    with pytest.raises(ValueError, match="slope"):
        mech.ipr_rate_split(np.ones(N), phi, s0, s1, slope=-1.0)


@pytest.mark.parametrize("n", [24, 25, 40])
def test_spectra_are_the_circulant_eigenvalues_of_data_spectral(n):
    """``circulant_spectra`` takes its eigenvalues from ``data.spectral.circulant_eigenvalues`` (the DFT
    of the first row): equal to the diagonal of Q^T Σ Q, its former computation, to 1e-12."""
    from localization.data import spectral

    for task in (
        data.LengthscaleTask.of(data.Gaussian, xi=(1.0, 3.0)),
        data.LengthscaleTask.of(data.NLGP, xi=(1.0, 3.0), gain=3.0),
        data.LengthscaleTask.of(data.Kur, xi=(0.7, 2.0), k=5.0),
    ):
        s0, s1 = task.covariances(n)
        sp = mech.circulant_spectra(s0, s1)
        for lam, s in ((sp.lam0, s0), (sp.lam1, s1)):
            np.testing.assert_array_equal(lam, spectral.circulant_eigenvalues(s[0])[sp.freq])
            assert np.max(np.abs(lam - np.diag(sp.basis.T @ s @ sp.basis))) < 1e-12
    # diagonal in the real Fourier basis but not circulant (a cos/sin pair split): rejected
    q, freq = spectral.real_fourier_basis(n)
    mu = np.asarray(spectral.eigenvalues(2.0, n))[freq].copy()
    mu[1] += 0.1
    with pytest.raises(ValueError, match="cov1 must be circulant"):
        mech.circulant_spectra(s0, q @ np.diag(mu) @ q.T)


def test_amplifier_value_and_slope_is_phi_and_its_derivative_and_refuses_non_callables():
    phi = theory.amplifier_of(data.NLGP(3.0, 3.0).marginal)
    a, h = 0.4, 1e-5
    value, slope = mech.amplifier_value_and_slope(phi, a)
    assert abs(value - float(phi(a))) < 1e-12
    # central difference: truncation ~ h^2 phi''' ~ 1e-10, rounding ~ 1e-16 / h ~ 1e-11
    assert abs(slope - (float(phi(a + h)) - float(phi(a - h))) / (2 * h)) < 1e-8
    # a plain callable is differentiated directly: the Gaussian line's slope
    assert mech.amplifier_value_and_slope(lambda x: 2.0 * x, 0.3) == (0.6, 2.0)
    with pytest.raises(TypeError, match="phi must be callable"):
        mech.amplifier_value_and_slope(3.0, 0.3)


def test_mode_threshold_is_the_least_ratio_over_the_non_constant_modes():
    lam0 = np.array([0.5, 2.0, 1.0, 3.0])
    lam1 = np.array([2.0, 1.0, 2.0, 1.0])
    value, index = mech.mode_threshold(lam0, lam1)
    r = lam0 / lam1
    assert index == 2 and value == pytest.approx((1 + r[2]) / (1 + r[0]), rel=1e-15)
    # a mode with lambda1 = 0 < lambda0 has r = inf and never wins; both zero is undefined
    assert mech.mode_threshold(np.array([0.5, 1.0, 0.1]), np.array([2.0, 0.0, 1.0]))[1] == 2
    with pytest.raises(ValueError, match="both class spectra vanish at entry 1"):
        mech.mode_threshold(np.array([0.5, 0.0, 0.1]), np.array([2.0, 0.0, 1.0]))
    with pytest.raises(ValueError, match="lambda1\\(0\\)"):
        mech.mode_threshold(np.array([0.5, 1.0]), np.array([0.0, 1.0]))
    with pytest.raises(ValueError, match="one length >= 2"):
        mech.mode_threshold(np.ones(3), np.ones(4))
