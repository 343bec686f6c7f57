r"""Where the constant state of the effective flow loses stability as the ring grows: the onset g*(N).

The mechanism chapter (``book/mechanism.md``, exercise 2) solves, at N = 40 and ξ = (1, 3), for the
NLGP gain g* at which the constant fixed point of the effective flow (paper Eq. (5)) loses stability
(:func:`localization.theory.mechanism.constant_mode_stability`): the elasticity
:math:`\rho=\alpha\varphi'(\alpha)/\varphi(\alpha)` at :math:`\alpha=\sqrt{\lambda_1(0)/N}` reaches
the threshold :math:`\min_{k\ne0}(1+r(k))/(1+r(0))`, :math:`r=\lambda_0/\lambda_1`. There the excess
kurtosis κ of NLGP(g*) is about -0.33, not 0. This module follows g*(N) to large N (exactly: the exact
amplifier, the exact covariances, their eigenvalues by FFT of one row; no sampling) and compares it
with the leading-order asymptotics derived here.

* :func:`class_spectra` — the eigenvalues of both class covariances from their first rows;
* :func:`constant_state` — α, ρ, the threshold and the first mode to grow at one parameter;
* :func:`onset_gain` — the onset parameter by Brent's method on ρ - threshold;
* :func:`onset_scaling` — onsets over several N and power laws fitted to κ*, threshold - 1, ρ - 1;
* :func:`predicted_asymptotics` — the leading-order prediction below (NLGP and Kur);
* :func:`kur_singular_coefficient` — the non-analytic term of Kur's φ that changes the Kur answer;
* :func:`fit_power_law` — least squares of log|y| on log x.

Leading-order asymptotics
-------------------------
*Spectra.* Both class covariances are circulant with rows :math:`c_y(d)` that decay like
:math:`e^{-d^2/\xi_y^2}`; for N ≫ ξ they are the infinite-lattice correlations up to terms
:math:`e^{-(N/2)^2/\xi^2}`, so :math:`\lambda_y(k)=S_y(k/N)` with the even, smooth lattice spectrum
:math:`S_y(\nu)=\sum_{d\in\mathbb Z}c_y(d)\cos2\pi\nu d=S_y\,[1-2\pi^2D_y\nu^2+O(\nu^4)]`, where
:math:`S_y=\sum_dc_y(d)` and :math:`D_y=\sum_dd^2c_y(d)/S_y` (a squared correlation length).

*Threshold.* With :math:`r_0=S_0/S_1`, :math:`r(\nu)=r_0[1+2\pi^2(D_1-D_0)\nu^2+O(\nu^4)]`; for
:math:`D_1>D_0` (class 1 correlated further) r rises from ν = 0, the minimum is at k = 1 and

.. math::

   \text{threshold}-1=\frac{r(1/N)-r_0}{1+r_0}

   \text{threshold}-1=\frac{T}{N^2}+O(N^{-4}),

   T=\frac{2\pi^2r_0}{1+r_0}(D_1-D_0).

*Elasticity.* φ is odd; if :math:`\varphi(a)=\varphi_1a+\varphi_3a^3/6+O(a^5)` then
:math:`\rho=1+\tfrac13(\varphi_3/\varphi_1)\,\alpha^2+O(\alpha^4)` (not ½: with
:math:`\varphi=\varphi_1a(1+pa^2)`, :math:`\rho-1=a\,\tfrac{d}{da}\log(1+pa^2)\approx2pa^2`,
:math:`p=\varphi_3/6\varphi_1`). For unit variance,
:math:`\varphi_1=\varphi'(0)=\sqrt{2/\pi}` and :math:`\varphi_3=\varphi'''(0)=\sqrt{2/\pi}(3-\mathbb E X^4)`
(:func:`localization.theory.amplifier_derivatives_at_zero`), so :math:`\varphi_3/\varphi_1=-\kappa`
and, with :math:`\alpha^2=S_1/N`, :math:`\rho-1=-\kappa S_1/(3N)+O(N^{-2})` at a fixed law.

*Onset (NLGP).* Equating the two: :math:`\kappa^*=C/N+O(N^{-2})` with

.. math::

   C=-\frac{3T}{S_1}=-\frac{6\pi^2r_0(D_1-D_0)}{(1+r_0)S_1}.

κ* → 0 forces g* → 0, where the NLGP covariances tend to the latent kernel
:math:`c_y(d)=e^{-d^2/\xi_y^2}`; by Poisson summation :math:`S_y=\xi_y\sqrt\pi` and
:math:`D_y=\xi_y^2/2` up to relative :math:`O(\pi^2\xi_y^2e^{-\pi^2\xi_y^2})` (:math:`r_0=\xi_0/\xi_1`), so
:math:`C\approx-3\pi^{3/2}\xi_0(\xi_1-\xi_0)/\xi_1=-11.137` for ξ = (1, 3); the lattice sums
(:math:`D_0=0.49898`) give C = -11.1404. The corrections are relative O(1/N): the NLGP covariances
differ from the kernel by
:math:`O(g^2)` and :math:`g^{*2}=O(1/N)`, while :math:`\varphi^{(5)}(0)/\varphi'(0)=O(g^2)`. Since
:math:`\kappa(g)=-8g^2+40g^4+O(g^6)` (expand :math:`\operatorname{erf}(gz)`),
:math:`g^*\approx\sqrt{-C/8N}\approx1.18/\sqrt N`. So the sign rule of Claim 3.2 becomes exact as
N → ∞, from below: at every finite N the onset sits at a negative κ* ≈ C/N.

*Onset (Kur).* Kur(k) has a density tail :math:`\tfrac12\mathcal Z_k^{-k}|x|^{-k-1}`; for 4 < k < 6
(κ changes sign at :math:`k_0\approx5.890`) :math:`\mathbb E X^6=\infty` and φ is not analytic at 0:
a Mellin transform of Eq. (6) gives :math:`\varphi(a)=\varphi_1a+\varphi_3a^3/6+B_k|a|^{k-1}\operatorname{sign}a+\dots`,
:math:`B_k=\mathcal Z_k^{-k}\,2^{(1-k)/2}\Gamma(1-k/2)/((k-1)\sqrt\pi)>0`
(:func:`kur_singular_coefficient`). Then
:math:`\rho-1=-\kappa\alpha^2/3+(k-2)(B_k/\varphi_1)\alpha^{k-2}`, and at the onset

.. math::

   \kappa^*=3(k-2)\frac{B_k}{\varphi_1}\Bigl(\frac{S_1}{N}\Bigr)^{(k-4)/2}

   \qquad-\frac{3T}{S_1N},

   \kappa^*\sim C_{\rm Kur}\,N^{-(k_0-4)/2}=C_{\rm Kur}\,N^{-0.945}:

κ* → 0 again, but from *above* (the tail term wins over the threshold), and slowly. Near
:math:`k_0` the :math:`a^{k-1}` term nearly cancels against the :math:`a^5` term (both have a pole at
k = 6), so the pure power :math:`\alpha^{k_0-2}` holds only once :math:`\alpha^{6-k_0}\ll1`,
i.e. far beyond any computable N (at κ = 0 the term beyond the cubic is 0.16 of its leading power at
α = 0.1 and 0.42 at α = 0.003); over N = 80..1280, κ*·N grows roughly like log N instead.

Measured (ξ = (1, 3), xtol 1e-10)
---------------------------------
NLGP: g* = 0.2285, 0.1454, 0.0978, 0.0675, 0.0472 at N = 40..640; κ*·N = -13.29, -12.24, -11.69,
-11.42, -11.28 (-11.21, -11.18 at 1280, 2560), Richardson-extrapolated -11.1404 against C = -11.1404;
fitted exponents -1.026 (κ*, N = 160..640) and -2.001 (threshold - 1); frequency 1 goes first at
every N. Kur: k* = 5.819, 5.714, 5.743, 5.787, 5.823 (k₀ = 5.890), κ* = +0.056, +0.147, +0.120, +0.082,
+0.052; fitted exponent -0.60.

Brent's method needs a bracket with a sign change of ρ - threshold: :func:`onset_gain` raises
``ValueError`` (naming ``bracket`` and both margins) when it has none.
"""

from __future__ import annotations

import math
import time
from collections.abc import Sequence
from typing import Any, NamedTuple

import numpy as np
import scipy.optimize
import scipy.special

from localization import data, theory
from localization import validation as v
from localization.data import spectral
from localization.data.marginals import KurMarginal, kur_excess_kurtosis_zero
from localization.theory.mechanism import mode_threshold

__all__ = [
    "FAMILIES",
    "XI",
    "NS",
    "BRACKETS",
    "XTOL",
    "FIT_POINTS",
    "ConstantState",
    "Onset",
    "PowerLaw",
    "Asymptotics",
    "OnsetScaling",
    "class_spectra",
    "constant_state",
    "onset_gain",
    "fit_power_law",
    "onset_scaling",
    "predicted_asymptotics",
    "kur_singular_coefficient",
]

#: The families whose onset is followed, and the name of their parameter.
FAMILIES = {"NLGP": "gain g", "Kur": "exponent k"}
#: The mechanism chapter's length-scales ξ = (ξ₀, ξ₁).
XI = (1.0, 3.0)
#: The ring sizes of :func:`onset_scaling` (doubling from the chapter's N = 40).
NS = (40, 80, 160, 320, 640)
#: Default Brent brackets: ρ < threshold at the left end, ρ > threshold at the right end, for every N in
#: :data:`NS` (NLGP: g* from 0.047 to 0.23; Kur: k* from 5.71 to 5.83). Kur needs k > 4 (finite κ).
BRACKETS = {"NLGP": (0.005, 0.5), "Kur": (4.3, 20.0)}
#: Brent's absolute tolerance on the parameter.
XTOL = 1e-10
#: How many of the largest N the power laws are fitted to.
FIT_POINTS = 3

_SQRT_2_OVER_PI = math.sqrt(2.0 / math.pi)
# e^{-d²/ξ²} < 1e-300 beyond d = 26.3 ξ: the lattice sums of the asymptotics stop there
_KERNEL_REACH = 27.0


class ConstantState(NamedTuple):
    r"""The constant fixed point of Eq. (5) at one parameter and ring size (:func:`constant_state`).

    Attributes
    ----------
    family : str
        "NLGP" or "Kur".
    n : int
        Ring size N.
    parameter : float
        The family parameter (NLGP gain g, Kur exponent k).
    excess_kurtosis : float
        κ of the class-1 marginal (exact).
    alpha : float
        :math:`\alpha=\sqrt{\lambda_1(0)/N}`, the argument of φ at every site.
    elasticity : float
        :math:`\rho=\alpha\varphi'(\alpha)/\varphi(\alpha)` (exact amplifier, autodiff).
    threshold : float
        :math:`\min_{k\ne0}(1+r(k))/(1+r(0))`.
    mode : int
        The frequency (1..N//2) at which the threshold is attained: the first mode to grow.
    cubic_elasticity : float
        :math:`\alpha^2\varphi'''(0)/(3\varphi'(0))`, the leading-order prediction of ρ - 1.
    """

    family: str
    n: int
    parameter: float
    excess_kurtosis: float
    alpha: float
    elasticity: float
    threshold: float
    mode: int
    cubic_elasticity: float

    @property
    def margin(self) -> float:
        """Return ρ - threshold (> 0: some Fourier mode grows at the constant state)."""
        return self.elasticity - self.threshold


class Onset(NamedTuple):
    r"""The parameter at which the constant state loses stability (:func:`onset_gain`).

    Attributes
    ----------
    family : str
        "NLGP" or "Kur".
    n : int
        Ring size N.
    parameter : float
        The onset: g* (NLGP) or k* (Kur), to ``xtol``.
    excess_kurtosis : float
        κ of the class-1 marginal at the onset.
    alpha, elasticity, threshold : float
        α, ρ and the threshold at the onset (ρ = threshold there, to Brent's tolerance).
    mode : int
        The frequency of the first mode to grow.
    cubic_elasticity : float
        :math:`\alpha^2\varphi'''(0)/(3\varphi'(0))` at the onset.
    xtol : float
        Brent's absolute tolerance on the parameter.
    iterations : int
        Brent's iterations.
    """

    family: str
    n: int
    parameter: float
    excess_kurtosis: float
    alpha: float
    elasticity: float
    threshold: float
    mode: int
    cubic_elasticity: float
    xtol: float
    iterations: int


class PowerLaw(NamedTuple):
    """y ≈ constant · x**exponent (:func:`fit_power_law`); ``constant`` carries the sign of y."""

    exponent: float
    constant: float


class Asymptotics(NamedTuple):
    r"""The leading-order large-N prediction of the onset (:func:`predicted_asymptotics`).

    Attributes
    ----------
    family : str
        "NLGP" or "Kur".
    parameter : float
        The law the onset tends to: g = 0 (NLGP, the latent Gaussian kernel) or :math:`k_0` (Kur).
    lattice_sums : tuple[float, float]
        :math:`(S_0, S_1)`, the sums of the class covariances' rows.
    correlation_lengths : tuple[float, float]
        :math:`(D_0, D_1)`, :math:`D_y=\sum_dd^2c_y(d)/S_y`.
    threshold_coefficient : float
        T: threshold - 1 ≈ T / N².
    kurtosis : PowerLaw
        κ* ≈ constant · N**exponent to leading order (NLGP: exponent -1, constant C = -3T/S₁;
        Kur: exponent -(k₀-4)/2, constant :math:`3(k_0-2)(B/\varphi_1)S_1^{(k_0-4)/2}`).
    threshold_term : float
        -3T/S₁, the coefficient of 1/N in κ* (NLGP: the same as ``kurtosis.constant``).
    """

    family: str
    parameter: float
    lattice_sums: tuple[float, float]
    correlation_lengths: tuple[float, float]
    threshold_coefficient: float
    kurtosis: PowerLaw
    threshold_term: float


class OnsetScaling(NamedTuple):
    """Onsets over several ring sizes and power laws fitted to them (:func:`onset_scaling`).

    Attributes
    ----------
    family : str
        "NLGP" or "Kur".
    xi : tuple[float, float]
        Length-scales (ξ₀, ξ₁).
    ns : tuple[int, ...]
        Ring sizes, increasing.
    onsets : tuple[Onset, ...]
        One per N.
    fit_points : int
        The fits use the ``fit_points`` largest N.
    kurtosis_fit, threshold_fit, elasticity_fit : PowerLaw
        Fitted to κ*, threshold - 1 and ρ - 1 at the onset (the last two agree to Brent's
        tolerance: ρ = threshold at the onset).
    predicted : Asymptotics
        The leading-order prediction.
    seconds : tuple[float, ...]
        Wall time of each onset (s).
    """

    family: str
    xi: tuple[float, float]
    ns: tuple[int, ...]
    onsets: tuple[Onset, ...]
    fit_points: int
    kurtosis_fit: PowerLaw
    threshold_fit: PowerLaw
    elasticity_fit: PowerLaw
    predicted: Asymptotics
    seconds: tuple[float, ...]

    @property
    def scaled_kurtosis(self) -> np.ndarray:
        """Return κ*·N for each N, (len(ns),) float64 (NLGP: tends to ``predicted.kurtosis.constant``)."""
        return np.array([o.excess_kurtosis * o.n for o in self.onsets])


# -------------------------------------------------------------------------------------------------
# arguments
# -------------------------------------------------------------------------------------------------
def _family(family: Any) -> str:
    if family not in FAMILIES:
        raise ValueError(f"family must be one of {tuple(FAMILIES)}, got {family!r}")
    return family


def _parameter(family: str, name: str, value: Any) -> float:
    if family == "NLGP":
        return v.positive(name, value)
    return v.greater_than(name, value, 4.0, "the excess kurtosis of Kur(k) diverges for k <= 4")


def _xi(xi: Any) -> tuple[float, float]:
    if not isinstance(xi, (tuple, list)) or len(xi) != 2:
        raise TypeError(f"xi must be a pair (xi0, xi1) of length-scales, got {xi!r}")
    xi0, xi1 = v.positive("xi[0]", xi[0]), v.positive("xi[1]", xi[1])
    if not xi1 > xi0:
        raise ValueError(f"xi must have xi[1] > xi[0] (class 1 has the longer length-scale), got {xi!r}")
    return xi0, xi1


# -------------------------------------------------------------------------------------------------
# the constant state
# -------------------------------------------------------------------------------------------------
def class_spectra(
    n: int, parameter: float, *, family: str = "NLGP", xi: tuple[float, float] = XI
) -> tuple[np.ndarray, np.ndarray]:
    r"""Return the eigenvalues :math:`\lambda_0,\lambda_1` of the two class covariances, in DFT order.

    The covariances are the exact ones of the data models (``model.covariance``); their eigenvalues are
    the FFT of the first row (:func:`localization.data.spectral.circulant_eigenvalues`), O(N log N)
    after the O(N²) covariance, instead of the O(N³) change of basis of
    :func:`localization.theory.mechanism.circulant_spectra` (same values, ordered there by ``freq``).

    Parameters
    ----------
    n : int
        Ring size N >= 4.
    parameter : float
        NLGP gain g > 0, or Kur exponent k > 4.
    family : str
        "NLGP" or "Kur".
    xi : tuple[float, float]
        Length-scales (ξ₀, ξ₁), 0 < ξ₀ < ξ₁.

    Returns
    -------
    tuple[np.ndarray, np.ndarray]
        ``(lam0, lam1)``, each (N,) float64, index k the DFT frequency.
    """
    family = _family(family)
    n = v.integer("n", n, minimum=4)
    parameter = _parameter(family, "parameter", parameter)
    task = data.family_task(family, parameter, _xi(xi))
    rows = (np.asarray(m.covariance(n)[0], dtype=np.float64) for m in (task.model0, task.model1))
    lam0, lam1 = (spectral.circulant_eigenvalues(row) for row in rows)
    return lam0, lam1


def _threshold(lam0: np.ndarray, lam1: np.ndarray) -> tuple[float, int]:
    """Return the threshold (:func:`localization.theory.mechanism.mode_threshold`) and the frequency attaining it."""
    value, k = mode_threshold(lam0, lam1)
    return value, min(k, lam1.shape[0] - k)


def constant_state(n: int, parameter: float, *, family: str = "NLGP", xi: tuple[float, float] = XI) -> ConstantState:
    r"""Return the constant fixed point's elasticity, threshold and first unstable mode at one parameter.

    The same quantities as :func:`localization.theory.mechanism.constant_mode_stability` (α, ρ and the
    threshold agree with it to rounding), from the spectra of :func:`class_spectra` instead of dense
    (N, N) products, so that N in the thousands stays cheap. ρ comes from the exact amplifier of the
    class-1 marginal (:func:`localization.theory.amplifier_of`) differentiated by ``jax.jvp``.

    Parameters
    ----------
    n : int
        Ring size N >= 4.
    parameter : float
        NLGP gain g > 0, or Kur exponent k > 4.
    family : str
        "NLGP" or "Kur".
    xi : tuple[float, float]
        Length-scales (ξ₀, ξ₁), 0 < ξ₀ < ξ₁.

    Returns
    -------
    ConstantState
        α, ρ, the threshold, its frequency, κ and the cubic prediction of ρ - 1.
    """
    family = _family(family)
    n = v.integer("n", n, minimum=4)
    parameter = _parameter(family, "parameter", parameter)
    xi = _xi(xi)
    lam0, lam1 = class_spectra(n, parameter, family=family, xi=xi)
    threshold, mode = _threshold(lam0, lam1)
    alpha = math.sqrt(lam1[0] / n)
    if not alpha < 1:  # pragma: no cover - λ₁(0) ≤ N always (unit diagonal); guarded for φ's domain
        raise ValueError(f"alpha = sqrt(lambda1(0)/N) must be < 1, got {alpha}")
    marginal = data.family_task(family, parameter, xi).model1.marginal
    value, slope = theory.mechanism.amplifier_value_and_slope(theory.amplifier_of(marginal), alpha)
    if not (math.isfinite(value) and math.isfinite(slope)) or value <= 0:
        raise ValueError(f"phi must be finite with phi(alpha) > 0 at alpha = {alpha:.6g}, got {value}, {slope}")
    derivatives = theory.amplifier_derivatives_at_zero(marginal)
    return ConstantState(
        family=family,
        n=n,
        parameter=parameter,
        excess_kurtosis=float(marginal.excess_kurtosis),
        alpha=alpha,
        elasticity=alpha * slope / value,
        threshold=threshold,
        mode=mode,
        cubic_elasticity=alpha**2 * derivatives.third / (3.0 * derivatives.first),
    )


def onset_gain(
    n: int,
    *,
    family: str = "NLGP",
    xi: tuple[float, float] = XI,
    bracket: tuple[float, float] | None = None,
    xtol: float = XTOL,
) -> Onset:
    r"""Return the parameter at which the constant state of Eq. (5) loses stability, by Brent's method.

    Solves :math:`\rho(p)=\text{threshold}(p)` (:func:`constant_state`) for the NLGP gain (or the Kur
    exponent) p inside ``bracket``. Deterministic: exact amplifier, exact covariances.

    Parameters
    ----------
    n : int
        Ring size N >= 4.
    family : str
        "NLGP" (p = g) or "Kur" (p = k).
    xi : tuple[float, float]
        Length-scales (ξ₀, ξ₁), 0 < ξ₀ < ξ₁.
    bracket : tuple[float, float] or None
        (lo, hi), lo < hi, in the family's range (g > 0; k > 4), with ρ - threshold of opposite signs at
        the two ends. ``None``: :data:`BRACKETS` [family].
    xtol : float
        Brent's absolute tolerance on p (> 0).

    Returns
    -------
    Onset
        p*, κ, α, ρ and the threshold there, the first mode to grow, Brent's tolerance and iterations.

    Raises
    ------
    ValueError
        When ``bracket`` holds no sign change of ρ - threshold (both margins are in the message), or an
        argument is out of range.
    """
    family = _family(family)
    n = v.integer("n", n, minimum=4)
    xi = _xi(xi)
    xtol = v.positive("xtol", xtol)
    if bracket is None:
        bracket = BRACKETS[family]
    if not isinstance(bracket, (tuple, list)) or len(bracket) != 2:
        raise TypeError(f"bracket must be a pair (lo, hi), got {bracket!r}")
    lo, hi = _parameter(family, "bracket[0]", bracket[0]), _parameter(family, "bracket[1]", bracket[1])
    if not lo < hi:
        raise ValueError(f"bracket must have bracket[0] < bracket[1], got {bracket!r}")

    def margin(p: float) -> float:
        return constant_state(n, p, family=family, xi=xi).margin

    m_lo, m_hi = margin(lo), margin(hi)
    if not (m_lo < 0 < m_hi or m_hi < 0 < m_lo):
        raise ValueError(
            f"bracket must hold a sign change of rho - threshold at N = {n}: got {m_lo:.3g} at "
            f"{FAMILIES[family]} = {lo} and {m_hi:.3g} at {hi}; widen bracket={bracket!r}"
        )
    root, result = scipy.optimize.brentq(margin, lo, hi, xtol=xtol, full_output=True)
    if not result.converged:  # pragma: no cover - brentq raises before this on failure
        raise RuntimeError(f"Brent's method did not converge: {result.flag}")
    state = constant_state(n, root, family=family, xi=xi)
    return Onset(*state, xtol=xtol, iterations=int(result.iterations))


# -------------------------------------------------------------------------------------------------
# scaling with N
# -------------------------------------------------------------------------------------------------
def fit_power_law(x: Any, y: Any) -> PowerLaw:
    """Return the least-squares fit of log|y| = log|constant| + exponent · log x.

    Parameters
    ----------
    x : array_like
        (P,) positive abscissae, P >= 2, not all equal.
    y : array_like
        (P,) finite ordinates, all non-zero and of one sign.

    Returns
    -------
    PowerLaw
        ``exponent`` and ``constant`` (with the sign of y).
    """
    x = np.asarray(v.float_array("x", x), dtype=np.float64)
    y = np.asarray(v.float_array("y", y), dtype=np.float64)
    if x.ndim != 1 or x.shape != y.shape or x.size < 2:
        raise ValueError(f"x and y must be 1-D of one length >= 2, got shapes {x.shape} and {y.shape}")
    if not (np.all(np.isfinite(x)) and np.all(x > 0)) or np.ptp(x) == 0:
        raise ValueError(f"x must be finite, positive and not all equal, got {x}")
    if not np.all(np.isfinite(y)) or not (np.all(y > 0) or np.all(y < 0)):
        raise ValueError(f"y must be finite, non-zero and of one sign (a power law), got {y}")
    exponent, intercept = np.polyfit(np.log(x), np.log(np.abs(y)), 1)
    return PowerLaw(float(exponent), float(np.sign(y[0]) * math.exp(intercept)))


def _ns(ns: Any) -> tuple[int, ...]:
    if isinstance(ns, (str, bytes)) or not isinstance(ns, Sequence) or len(ns) < 2:
        raise TypeError(f"ns must be a sequence of at least 2 ring sizes, got {ns!r}")
    out = tuple(v.integer(f"ns[{i}]", n, minimum=4) for i, n in enumerate(ns))
    if any(b <= a for a, b in zip(out[:-1], out[1:], strict=False)):
        raise ValueError(f"ns must be strictly increasing, got {out}")
    return out


def onset_scaling(
    ns: Sequence[int] = NS,
    *,
    family: str = "NLGP",
    xi: tuple[float, float] = XI,
    bracket: tuple[float, float] | None = None,
    fit_points: int = FIT_POINTS,
    xtol: float = XTOL,
) -> OnsetScaling:
    """Return the onsets at every N of ``ns`` and power laws in N fitted to the largest ``fit_points``.

    Fits (:func:`fit_power_law`) of κ* (its size, sign kept in the constant), threshold - 1 and ρ - 1 at the
    onset, compared with :func:`predicted_asymptotics`.

    Parameters
    ----------
    ns : sequence of int
        Ring sizes, strictly increasing, each >= 4, at least 2.
    family : str
        "NLGP" or "Kur".
    xi : tuple[float, float]
        Length-scales (ξ₀, ξ₁), 0 < ξ₀ < ξ₁.
    bracket : tuple[float, float] or None
        Brent's bracket for every N (:func:`onset_gain`).
    fit_points : int
        How many of the largest N the fits use, in [2, len(ns)].
    xtol : float
        Brent's absolute tolerance (> 0).

    Returns
    -------
    OnsetScaling
        The onsets, the three fits, the prediction and the time per onset.
    """
    family = _family(family)
    ns = _ns(ns)
    xi = _xi(xi)
    fit_points = v.integer("fit_points", fit_points, minimum=2, maximum=len(ns))
    onsets, seconds = [], []
    for n in ns:
        start = time.perf_counter()
        onsets.append(onset_gain(n, family=family, xi=xi, bracket=bracket, xtol=xtol))
        seconds.append(time.perf_counter() - start)
    tail = onsets[-fit_points:]
    x = [o.n for o in tail]
    return OnsetScaling(
        family=family,
        xi=xi,
        ns=ns,
        onsets=tuple(onsets),
        fit_points=fit_points,
        kurtosis_fit=fit_power_law(x, [o.excess_kurtosis for o in tail]),
        threshold_fit=fit_power_law(x, [o.threshold - 1.0 for o in tail]),
        elasticity_fit=fit_power_law(x, [o.elasticity - 1.0 for o in tail]),
        predicted=predicted_asymptotics(family=family, xi=xi),
        seconds=tuple(seconds),
    )


# -------------------------------------------------------------------------------------------------
# the prediction
# -------------------------------------------------------------------------------------------------
def kur_singular_coefficient(k: float) -> float:
    r"""Return :math:`B_k`, the coefficient of the non-analytic term :math:`B_k|a|^{k-1}` of Kur(k)'s φ (a > 0).

    For 4 < k < 6, :math:`\varphi(a)=\varphi'(0)a+\varphi'''(0)a^3/6+B_ka^{k-1}+o(a^{k-1})` as a → 0+,
    with :math:`B_k=\mathcal Z_k^{-k}\,I_k`, :math:`I_k=2^{(1-k)/2}\Gamma(1-k/2)/((k-1)\sqrt\pi)`:
    the tail :math:`\tfrac12\mathcal Z_k^{-k}x^{-k-1}` of the unit-variance density, times
    :math:`2\int_0^\infty u^{-k}[\operatorname{erf}(u/\sqrt2)-\sqrt{2/\pi}(u-u^3/6)]\,du=2I_k` (the
    Mellin transform of erf, continued to :math:`1-k\in(-5,-3)`). Positive: Γ > 0 on (-2, -1).

    Parameters
    ----------
    k : float
        Kur exponent, 4 < k < 6.

    Returns
    -------
    float
        :math:`B_k` > 0.
    """
    k = v.in_range("k", k, 4.0, 6.0, low_open=True, high_open=True)
    mellin = 2.0 ** ((1.0 - k) / 2.0) * scipy.special.gamma(1.0 - k / 2.0) / ((k - 1.0) * math.sqrt(math.pi))
    return KurMarginal(k).normaliser ** (-k) * float(mellin)


def _lattice_moments(row: np.ndarray) -> tuple[float, float]:
    """S = Σ_d c(d) and D = Σ_d d² c(d) / S of a symmetric circulant row (d the ring distance)."""
    n = row.shape[0]
    d = np.minimum(np.arange(n), n - np.arange(n)).astype(np.float64)
    total = float(np.sum(row))
    return total, float(np.sum(d**2 * row)) / total


def predicted_asymptotics(*, family: str = "NLGP", xi: tuple[float, float] = XI) -> Asymptotics:
    r"""Return the leading-order prediction of κ*(N) and threshold(N) - 1 (see the module docstring).

    NLGP: the onset gain tends to 0, so the lattice sums are those of the latent kernel
    :math:`e^{-d^2/\xi_y^2}` and κ* ≈ C/N with C = -3T/S₁. Kur: the onset exponent tends to
    :math:`k_0` (:func:`localization.data.marginals.kur_excess_kurtosis_zero`); the sums are those of
    the Kur(k₀) covariances, and κ* ≈ :math:`C_{\rm Kur}N^{-(k_0-4)/2}` to leading order.

    Parameters
    ----------
    family : str
        "NLGP" or "Kur".
    xi : tuple[float, float]
        Length-scales (ξ₀, ξ₁), 0 < ξ₀ < ξ₁.

    Returns
    -------
    Asymptotics
        S, D of both classes, T, the leading power law of κ* and the 1/N term -3T/S₁.
    """
    family = _family(family)
    xi = _xi(xi)
    # a ring on which the periodic images of e^{-d²/ξ²} are below 1e-300: the infinite-lattice sums
    reach = 2 * math.ceil(_KERNEL_REACH * xi[1]) + 2
    if family == "NLGP":
        limit = 0.0
        rows = [spectral.covariance(x, reach)[0] for x in xi]
    else:
        limit = kur_excess_kurtosis_zero()
        task = data.LengthscaleTask.of(data.Kur, xi=xi, k=limit)
        rows = [task.model0.covariance(reach)[0], task.model1.covariance(reach)[0]]
    (s0, d0), (s1, d1) = (_lattice_moments(np.asarray(r, dtype=np.float64)) for r in rows)
    r0 = s0 / s1
    t = 2.0 * math.pi**2 * r0 / (1.0 + r0) * (d1 - d0)
    threshold_term = -3.0 * t / s1
    if family == "NLGP":
        kurtosis = PowerLaw(-1.0, threshold_term)
    else:
        tail = 3.0 * (limit - 2.0) * kur_singular_coefficient(limit) / _SQRT_2_OVER_PI
        kurtosis = PowerLaw(-(limit - 4.0) / 2.0, tail * s1 ** ((limit - 4.0) / 2.0))
    return Asymptotics(family, limit, (s0, s1), (d0, d1), t, kurtosis, threshold_term)
