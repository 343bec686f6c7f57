"""Analytical objects of the paper: closed forms and flows only (pure functions and pytrees).

The rule (checked by ``tests/test_layout.py``): nothing here draws random numbers, fits a model to
data or measures a training run, and nothing here imports ``train``, ``metrics``, the field analysis,
``experiments``, ``figures`` or ``plotting``. The sampled, fitted and measured counterparts of these
objects are the chapters' back-ends in :mod:`localization.experiments`. A function may still evaluate
a definition on arrays it is given (a loss or a gated mean on a batch, a binned estimate from given
samples): that is the definition, not a measurement of a run.

Modules:

* ``amplifier`` — the amplifier φ of a marginal (paper Eq. (6)), its cubic Taylor polynomial and
  derivatives at 0 (Lemma B.1), the :class:`PytreeAmplifier` protocol, evaluation at concrete points;
* ``tabulated`` — φ tabulated on [-1, 1] and interpolated (fast exact φ for flow integrations);
* ``linearity`` — φ against the linear reference √(2/π) a (§3.2, App. B.1) and roots over a family;
* ``effective`` — the effective early-time flow (Lemma 3.1, Eq. (5)) and the Gaussian closed forms;
* ``batch_gradient`` — the steps of the derivation of Lemma 3.1 evaluated on given batches: the neuron's
  loss, its gradient and its terms, the gated mean, the binned gate probability (App. C.1–C.2);
* ``exact_gated_mean`` — their closed forms: the gated mean for Gaussian and elliptical data, the
  Gaussian gate probability, the Ising chain's exact law by transfer matrix (App. C.2, C.4);
* ``assumptions`` — assumptions A1–A3 behind the flow (§3.1): A1 by quadrature, exact values for
  finite laws, A3's Lindeberg ratio (A2 by conditional Monte Carlo: ``experiments.amplifier``);
* ``binned_discrepancies`` — the A1 and A2 discrepancies estimated from given samples by binning;
* ``mechanism`` — why the flow localizes: Fourier-mode rates, the constant state's stability, the IPR rate;
* ``prediction`` — the paper's sign rule (Claim 3.2) and Eq. (6) evaluated on given samples;
* ``gaussian`` — the exact ReLU flow on Gaussian and elliptical data and its fixed points;
* ``gates`` — gating structures of the gated deep linear network (the ``Gating`` protocol) and the
  Gaussian closed forms of half-space gates (agreement of two gates, the preactivation's kurtosis);
* ``gdln`` — the GDLN flow, its exact solution, OLS limit and loss;
* ``gdln_moments`` — the GDLN moments b and A in closed form;
* ``hypercube_laws`` — laws on {-1, +1}^n: the vertices, iid signs, the Ising ring, the law of sign(Z);
* ``hypercube`` — f(w) = E[1(⟨w, X⟩ ≥ 0) X] on {-1, +1}^n by exact enumeration, its closed forms;
* ``hypercube_flow`` — the neuron's exact flow c(w) − A(w)w on two laws on {-1, +1}^n, its integration
  and fixed points;
* ``sigmoid`` — closed forms of the erf network: bias flow, spread of preactivations, starting losses.

Every module is listed in ``__all__``; the names of ``amplifier``, ``tabulated``, ``linearity``,
``effective`` and ``mechanism`` are also re-exported here (``theory.amplifier_of(m)``,
``theory.integrate_effective(...)``); the other modules are used as modules (``theory.gdln.ols_limit``).
"""

from localization.theory import (
    amplifier,
    assumptions,
    batch_gradient,
    binned_discrepancies,
    effective,
    exact_gated_mean,
    gates,
    gaussian,
    gdln,
    gdln_moments,
    hypercube,
    hypercube_flow,
    hypercube_laws,
    linearity,
    mechanism,
    prediction,
    sigmoid,
    tabulated,
)
from localization.theory.amplifier import (
    Amplifier,
    AmplifierDerivatives,
    CubicTaylor,
    PytreeAmplifier,
    alg_inv,
    amplifier_derivatives_at_zero,
    amplifier_of,
    amplifier_taylor,
    evaluate_amplifier,
)
from localization.theory.effective import (
    amplifier_argument,
    effective_fixed_point,
    effective_jacobian,
    effective_vector_field,
    integrate_effective,
)
from localization.theory.linearity import family_root, linear_crossings, linear_deviation
from localization.theory.mechanism import (
    GAUSSIAN_SLOPE,
    ConstantModeStability,
    FourierSpectra,
    circulant_spectra,
    constant_mode_stability,
    effective_gain,
    ipr_rate_split,
    linear_mode_rates,
    mode_threshold,
    single_mode_amplitude,
)
from localization.theory.tabulated import TabulatedAmplifier, tabulate_amplifier

__all__ = [
    "amplifier",
    "assumptions",
    "batch_gradient",
    "binned_discrepancies",
    "effective",
    "exact_gated_mean",
    "gates",
    "gaussian",
    "gdln",
    "gdln_moments",
    "hypercube",
    "hypercube_flow",
    "hypercube_laws",
    "linearity",
    "mechanism",
    "prediction",
    "sigmoid",
    "tabulated",
    "Amplifier",
    "AmplifierDerivatives",
    "CubicTaylor",
    "PytreeAmplifier",
    "alg_inv",
    "amplifier_of",
    "amplifier_derivatives_at_zero",
    "amplifier_taylor",
    "evaluate_amplifier",
    "amplifier_argument",
    "effective_vector_field",
    "effective_jacobian",
    "effective_fixed_point",
    "integrate_effective",
    "family_root",
    "linear_crossings",
    "linear_deviation",
    "GAUSSIAN_SLOPE",
    "ConstantModeStability",
    "FourierSpectra",
    "circulant_spectra",
    "constant_mode_stability",
    "mode_threshold",
    "effective_gain",
    "ipr_rate_split",
    "linear_mode_rates",
    "single_mode_amplitude",
    "TabulatedAmplifier",
    "tabulate_amplifier",
]
