"""Analytical objects of the paper: the amplifier φ (Eq. 6), the effective flow (Eq. 5) and the
assumptions A1–A3 behind it (§3.1). Other theory modules (fourier, elliptical, gdln, ...) are
imported by their owners here too.
"""

from localization.theory.amplifier import (  # noqa: F401
    Amplifier,
    AmplifierDerivatives,
    CubicTaylor,
    alg_inv,
    amplifier,
    amplifier_derivatives_at_zero,
    amplifier_taylor,
)
from localization.theory.effective import (  # noqa: F401
    amplifier_argument,
    effective_vector_field,
    expected_gradient_gaussian,
    expected_loss_gaussian,
    integrate_effective,
)
from localization.theory import assumptions  # noqa: F401
