"""Tests of localization.theory.linearity: φ against the linear reference, and roots over a family."""

import math
from types import SimpleNamespace

import jax.numpy as jnp
import numpy as np
import pytest

from localization.theory import linearity as lin
from localization.theory.amplifier import Amplifier

SQ = math.sqrt(2 / math.pi)


@pytest.mark.slow
def test_linear_deviation_and_crossings():
    gauss = Amplifier.gaussian(1.0)
    np.testing.assert_allclose(lin.linear_deviation(gauss, np.linspace(-0.9, 0.9, 7)), 0.0, atol=1e-15)
    assert lin.linear_crossings(gauss).size == 0
    binary = Amplifier.binary(1.0)
    assert np.all(lin.linear_deviation(binary, np.linspace(0.05, 0.95, 19)) > 0)
    assert lin.linear_crossings(binary).size == 0

    def synthetic(a):  # crosses the line at a = 0.37 only
        return SQ * a + a**3 * (jnp.abs(a) - 0.37)

    roots = lin.linear_crossings(synthetic, num=101)
    np.testing.assert_allclose(roots, [0.37], atol=1e-10)
    # the deviation of the binary law is the closed form erf(alg^-1(a)/sqrt 2) - sqrt(2/pi) a
    a = np.array([0.1, 0.5, 0.9])
    from scipy.special import erf

    expected = erf(a / np.sqrt(1 - a**2) / math.sqrt(2)) - SQ * a
    np.testing.assert_allclose(lin.linear_deviation(binary, a), expected, rtol=0, atol=1e-14)


def test_family_root():
    fam = lambda p: SimpleNamespace(excess_kurtosis=3.0 - p)  # noqa: E731
    root = lin.family_root(fam, lambda m: m.excess_kurtosis, (0.0, 10.0))
    assert abs(root - 3.0) < 1e-10
    root = lin.family_root(fam, lambda m: m.excess_kurtosis, (0.0, 10.0), target=1.0)
    assert abs(root - 2.0) < 1e-10


def test_kur_zero_kurtosis_root_matches_the_library():
    from localization import data

    root = lin.family_root(lambda k: data.Kur(1.0, k).marginal, lambda m: m.excess_kurtosis, (5.0, 7.0))
    assert abs(root - data.kur_excess_kurtosis_zero()) < 1e-9


def test_validation_errors():
    with pytest.raises(TypeError, match="phi must be callable"):
        lin.linear_deviation(3.0, 0.5)
    with pytest.raises(ValueError, match=r"a must be finite and lie in \[-1, 1\]"):
        lin.linear_deviation(Amplifier.binary(1.0), 1.5)
    with pytest.raises(TypeError, match="phi must be callable"):
        lin.linear_crossings(None)
    with pytest.raises(ValueError, match="num must be an integer >= 3"):
        lin.linear_crossings(Amplifier.binary(1.0), num=2)
    with pytest.raises(ValueError, match="tol must be positive"):
        lin.linear_crossings(Amplifier.binary(1.0), tol=0.0)
    fam = lambda p: SimpleNamespace(s=p)  # noqa: E731
    stat = lambda m: m.s  # noqa: E731
    with pytest.raises(TypeError, match="make_marginal must be callable"):
        lin.family_root(1, stat, (0, 1))
    with pytest.raises(TypeError, match="statistic must be callable"):
        lin.family_root(fam, 1, (0, 1))
    with pytest.raises(ValueError, match="bracket must be a pair"):
        lin.family_root(fam, stat, (0, 1, 2))
    with pytest.raises(ValueError, match="bracket must satisfy low < high"):
        lin.family_root(fam, stat, (1, 0))
    with pytest.raises(ValueError, match="opposite signs"):
        lin.family_root(fam, stat, (1, 2))
    with pytest.raises(ValueError, match="opposite signs"):
        lin.family_root(fam, lambda m: math.inf, (-1, 2))
    with pytest.raises(ValueError, match="tol must be positive"):
        lin.family_root(fam, stat, (-1, 1), tol=-1.0)
    with pytest.raises(ValueError, match="target must be finite"):
        lin.family_root(fam, stat, (-1, 1), target=math.nan)
