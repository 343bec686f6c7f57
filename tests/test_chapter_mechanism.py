"""Identities of the library behind the chapter *The mechanism* (``book/mechanism.md``).

The chapter checks its equations against the flow; these tests hold the library's identities: the
effective flow and its Jacobian (``theory.effective_vector_field``, ``theory.effective_jacobian``,
wrapped by ``localization.experiments.mechanism.fourier_jacobian``) against Eq. (mech-flow) written out
and differentiated by JAX.
"""

import jax
import jax.numpy as jnp
import numpy as np
import pytest

import localization
from localization import theory
from localization.experiments import gaussian as gx
from localization.experiments import mechanism as em
from localization.theory import mechanism as mech

localization.enable_float64()

N = em.N


def _field(w, phi, s0, s1):
    """Eq. (mech-flow) written out, traceable by JAX."""
    f = phi.core if isinstance(phi, theory.PytreeAmplifier) else phi
    a = s1 @ w / jnp.sqrt(w @ s1 @ w)
    return 0.5 * (f(a) - (s0 + s1) @ w)


@pytest.fixture(scope="module")
def setting():
    return em.setup()


def _w_fixed():
    i = np.arange(N)
    return 1.0 + 0.5 * np.cos(2 * np.pi * i / N) + 0.3 * np.sin(6 * np.pi * i / N)


def test_library_field_is_the_written_out_flow(setting):
    """The chapter's Eq. (mech-flow) is the library's effective flow, for the three amplifiers."""
    w = _w_fixed()
    for name in setting.tasks:
        lib = np.asarray(theory.effective_vector_field(w, setting.phi[name], *setting.cov[name]))
        own = np.asarray(_field(jnp.asarray(w), setting.phi[name], *setting.cov[name]))
        assert np.max(np.abs(lib - own)) < 1e-12, name


def test_fourier_jacobian_is_autodiff_of_the_written_out_flow(setting):
    name = "NLGP(3)"
    s0, s1 = setting.cov[name]
    q = mech.circulant_spectra(s0, s1).basis
    w = np.random.default_rng(0).normal(size=N)
    jac = np.asarray(jax.jacfwd(lambda x: _field(x, setting.phi[name], s0, s1))(jnp.asarray(w)))
    got = em.fourier_jacobian(w, setting.phi[name], s0, s1, q)
    assert got.shape == (N, N) and got.dtype == np.float64
    assert np.max(np.abs(got - q.T @ jac @ q)) < 1e-12


def test_fourier_jacobian_with_linear_phi_is_the_gaussian_one(setting):
    s0, s1 = setting.cov["Gaussian"]
    q = mech.circulant_spectra(s0, s1).basis
    w = np.random.default_rng(1).normal(size=N)
    linear = lambda a: mech.GAUSSIAN_SLOPE * a  # noqa: E731
    got = em.fourier_jacobian(w, linear, s0, s1, q)
    assert np.max(np.abs(got - gx.fourier_jacobian(w, s0, s1, q))) < 1e-12


def test_fourier_jacobian_is_diagonal_at_the_constant_state(setting):
    """Eq. (mech-const): the rates of constant_mode_stability on the diagonal, nothing off it."""
    name = "Kur(5)"
    st = mech.constant_mode_stability(setting.phi[name], *setting.cov[name])
    q = mech.circulant_spectra(*setting.cov[name]).basis
    jq = em.fourier_jacobian(st.amplitude * np.ones(N), setting.phi[name], *setting.cov[name], q)
    assert np.max(np.abs(jq - np.diag(st.rates))) < 1e-12


def test_fourier_jacobian_validates(setting):
    s0, s1 = setting.cov["Gaussian"]
    q = mech.circulant_spectra(s0, s1).basis
    linear = lambda a: mech.GAUSSIAN_SLOPE * a  # noqa: E731
    w = np.ones(N)
    with pytest.raises(ValueError, match="basis"):
        em.fourier_jacobian(w, linear, s0, s1, np.eye(3))
    with pytest.raises(ValueError, match="w must be"):
        em.fourier_jacobian(np.ones((2, N)), linear, s0, s1, q)
    with pytest.raises(ValueError, match="orthonormal"):
        em.fourier_jacobian(w, linear, s0, s1, 2 * q)
    with pytest.raises(ValueError, match="non-zero"):
        em.fourier_jacobian(np.zeros(N), linear, s0, s1, q)
    with pytest.raises(TypeError, match="phi must be callable"):
        em.fourier_jacobian(w, 3.0, s0, s1, q)
