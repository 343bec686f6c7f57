r"""Geometry of receptive fields on a ring or a torus: peaks, frequencies, distances, correlations, fits.

A field is flattened, ``(..., N)`` with ``N = prod(n)``, in the data models' row-major layout; ``n`` is
the input size as everywhere in the library: an int (a ring of N sites) or a grid shape such as
``(30, 30)`` (a torus). Where ``n`` is optional it defaults to a ring of N sites. A ring is the
1-torus: every function below has one implementation for both. Leading axes are kept.

* Localized: :func:`is_localized` (**the book's one definition**: more than :data:`LOCALIZED_SHARE` = 0.8
  of :math:`\|w\|^2` in one window holding a quarter of the sites), :func:`localization_share` (that share),
  :func:`bump_width` (the bump's width, a separate measure), :func:`sites_holding` (the sites holding
  a share of ‖w‖², another width), :func:`localization_window`.
* Peaks: :func:`peak_position` (flat index of the largest :math:`|w_i|`), :func:`peak_sites` (its grid
  coordinates and the sign of w there), :func:`peak_agreement` (paper §4.2's "peaks match").
* Frequencies: :func:`frequency_power` (share of :math:`\|w\|^2` per real Fourier wave),
  :func:`dominant_frequency` (the wave with the largest share).
* Distances: :func:`circular_distance` (periodic distance between sites), :func:`sign_pairing` and
  :func:`pairing_null` (nearest peak of opposite sign), :func:`tiling_gaps` and :func:`gap_cv` (how
  evenly peaks tile a ring), :func:`window_share` (largest share of :math:`\|w\|^2` in one window)
  and :func:`wave_window_share` (its closed form for one wave).
* Correlations: :func:`cross_correlate` (:math:`\langle T_\tau w, x\rangle` for every shift τ),
  :func:`shift_correlation` (its cosine-normalised form), :func:`aligned_correlation` (the best shift,
  optionally up to sign), :func:`within_similarity` (mean over the pairs of a population).
* Fits: :func:`fit_sinusoid` (the best :math:`R\cos(2\pi kj/N+\varphi)` with an integer frequency k,
  exact by the DFT, batched) and :func:`fit_continuous_sinusoid` (:math:`A\sin(2\pi f(x-x_0))+c` with a
  continuous frequency f, one field); the Gabor and bump fits are :mod:`localization.experiments.gabor`'s.

**Rules.** *Ties* go to the first candidate: the lowest flat site index for peaks, the first wave in
``numpy.fft.rfftn`` order for frequencies (on a ring: the lowest frequency; shares within a relative
``1e-12`` of the largest count as tied, since the FFT's rounding splits exact ties).
*The mean* (frequency 0) is a wave like any other in :func:`frequency_power` and
:func:`dominant_frequency`; ``exclude_mean=True`` ranks the non-constant waves only (a population whose
fields ride on an offset). No function subtracts the mean from a field.

**NumPy or JAX.** :func:`peak_position`, :func:`circular_distance` and :func:`cross_correlate` are
array-generic: JAX arrays in give JAX arrays out, traceable under ``jit``/``vmap`` for use inside jitted
code (argument checks that need values are skipped for tracers); NumPy input stays NumPy, in float64
whatever JAX's precision mode. Everything else is NumPy post-processing of
concrete float64 arrays (validation of values, ``argmax`` with ties, ``scipy`` fits, Monte Carlo nulls
drawn with an explicit JAX ``key``): it summarises finished runs, is not traced, and must not depend on
JAX's 32/64-bit mode.

One namespace, three files under the library's module-size cap: :mod:`~localization.field_analysis.space`
(position space: peaks, distances, windows, pairing, tiling) and :mod:`~localization.field_analysis.fourier`
(Fourier space: frequency shares, FFT correlations, the sinusoid fits) and
:mod:`~localization.field_analysis.localized` (the definition of a localized field); callers use
``field_analysis.<name>``. (Not ``fields``: the chapters and the figures use ``fields`` for arrays of
fields, which would shadow the module in a notebook.)

Scalar summaries of runs and samples (IPR, shape distance, curve crossings, kurtosis, autocovariance of
samples, means with standard errors) are :mod:`localization.metrics`'s.
"""

from localization.field_analysis import base, fourier, localized, space
from localization.field_analysis.fourier import (
    Alignment,
    ContinuousSinusoidFit,
    SinusoidFit,
    aligned_correlation,
    cross_correlate,
    dominant_frequency,
    fit_continuous_sinusoid,
    fit_sinusoid,
    frequency_power,
    shift_correlation,
    within_similarity,
)
from localization.field_analysis.localized import (
    LOCALIZED_SHARE,
    bump_width,
    is_localized,
    localization_share,
    localization_window,
    sites_holding,
)
from localization.field_analysis.space import (
    Pairing,
    PeakAgreement,
    circular_distance,
    gap_cv,
    pairing_null,
    peak_agreement,
    peak_position,
    peak_sites,
    sign_pairing,
    tiling_gaps,
    wave_window_share,
    window_share,
)

__all__ = [
    "base",
    "space",
    "fourier",
    "localized",
    "LOCALIZED_SHARE",
    "localization_window",
    "localization_share",
    "is_localized",
    "bump_width",
    "sites_holding",
    "peak_position",
    "peak_sites",
    "PeakAgreement",
    "peak_agreement",
    "frequency_power",
    "dominant_frequency",
    "circular_distance",
    "window_share",
    "wave_window_share",
    "Pairing",
    "sign_pairing",
    "pairing_null",
    "tiling_gaps",
    "gap_cv",
    "cross_correlate",
    "shift_correlation",
    "Alignment",
    "aligned_correlation",
    "within_similarity",
    "SinusoidFit",
    "fit_sinusoid",
    "ContinuousSinusoidFit",
    "fit_continuous_sinusoid",
]
