"""Data models of paper Section 2.3 (and notes 001's single pulse), with exact statistics.

One concept per module:

============================  =====================================================================
``data.base``                 the protocol: :class:`DataModel` (``sample``, ``marginal``,
                              ``covariance``, ``lengthscale``) and argument checks
``data.spectral``             the latent covariance C(xi), its root, the real Fourier basis, and the
                              spectral sampler of correlated normals
``data.quadrature``           tanh-sinh and adaptive quadrature for exact expectations
``data.marginals``            the law of one coordinate (exact moments, quadrature); those of the
                              dimension-dependent elliptical laws are in ``data.elliptical``
``data.copula``               Gaussian copulas X_i = T(Z_i): Gaussian, NLGP, Kur, RootedKur
``data.ising``                the periodic Ising chain (exact sampler; the paper's Metropolis chains)
``data.paper_samplers``       reproductions of the paper code's Kur and Ising samplers (comparison)
``data.elliptical``           elliptical laws: Student t, ellipse surface, radial law
``data.pulse``                the single binary pulse of notes 001
``data.clone``                the Gaussian clone of any model (same covariance, Gaussian marginals)
``data.empirical``            real samples as a data model (empirical law, z-scored, sign-symmetrised)
                              and the task "data against its Gaussian clone"
``data.images``               grey rows and patches of scikit-learn's two bundled photographs
``data.ring``                 real samples made translation invariant by random cyclic shifts
``data.task``                 the two-class length-scale task and the named families
``data.covariance_task``      two Gaussian classes with any given covariances (the exact Gaussian flow)
============================  =====================================================================

Every module is listed in ``__all__``, with the names re-exported here (``data.NLGP``).

Every model is sign-symmetric (S3), translation-invariant on the periodic index set (S2) and has unit
marginal variance; see :mod:`localization.data.base` for the protocol and the pytree layout.

Covariance of the underlying Gaussian: the periodised squared-exponential kernel (see
:mod:`localization.data.spectral`), which is PSD for every xi > 0, unlike the paper's wrapped kernel
exp(-d^2/xi^2) (available as :func:`min_distance_covariance` for comparison).

Speed: samplers draw standard normals once, scale them by the covariance's spectral amplitudes and
map them to the sites with the fixed real Fourier basis, per axis: a matrix product on short axes, one
inverse real FFT on axes of length >= ``spectral.FFT_MIN_LENGTH`` (``method`` of ``sample``; the
crossover measured by ``benchmarks/data_sampling.py --methods``), so a ring of N sites costs
O(N log N) per sample. At the chapters' sizes the cost is dominated by the random bits and the normal
transform; see ``benchmarks/bench.py``. (``GaussianClone`` keeps a dense root: O(N**2).)
"""

from localization.data import (
    base,
    clone,
    copula,
    covariance_task,
    elliptical,
    empirical,
    images,
    ising,
    marginals,
    paper_samplers,
    pulse,
    quadrature,
    ring,
    spectral,
    task,
)
from localization.data.base import DataModel
from localization.data.clone import GaussianClone
from localization.data.copula import NLGP, CopulaModel, Gaussian, Kur, RootedKur, copula_covariance
from localization.data.covariance_task import CovarianceTask
from localization.data.elliptical import (
    EllipseSurface,
    EllipticalModel,
    RadialElliptical,
    RadialEllipticalMarginal,
    SphereMarginal,
    StudentT,
)
from localization.data.empirical import CloneTask, EmpiricalMarginal, EmpiricalModel
from localization.data.ising import Ising, ising_correlation, metropolis_ising
from localization.data.marginals import (
    GaussianMarginal,
    KurMarginal,
    Marginal,
    NLGPMarginal,
    RademacherMarginal,
    StudentTMarginal,
    kur_excess_kurtosis,
    kur_excess_kurtosis_zero,
    kur_normaliser,
    kur_transform,
    nlgp_excess_kurtosis,
    nlgp_normaliser,
    nlgp_transform,
)
from localization.data.paper_samplers import PaperIsing, PaperKur, paper_metropolis_ising
from localization.data.pulse import SinglePulse
from localization.data.ring import RingModel
from localization.data.spectral import (
    covariance,
    covariance_sqrt,
    fourier_basis,
    min_distance_covariance,
    spectral_amplitudes,
)
from localization.data.task import FAMILIES, LengthscaleTask, family_task, lengthscale_tasks

__all__ = [
    # the modules
    "base",
    "clone",
    "copula",
    "covariance_task",
    "elliptical",
    "empirical",
    "images",
    "ising",
    "paper_samplers",
    "marginals",
    "pulse",
    "quadrature",
    "ring",
    "spectral",
    "task",
    # the protocol
    "DataModel",
    "EmpiricalModel",
    "EmpiricalMarginal",
    "CloneTask",
    "CopulaModel",
    "EllipticalModel",
    # models
    "Gaussian",
    "NLGP",
    "Kur",
    "RootedKur",
    "Ising",
    "PaperIsing",
    "PaperKur",
    "StudentT",
    "EllipseSurface",
    "RadialElliptical",
    "SinglePulse",
    "RingModel",
    "GaussianClone",
    # the task
    "LengthscaleTask",
    "CovarianceTask",
    "FAMILIES",
    "family_task",
    "lengthscale_tasks",
    # the latent covariance
    "covariance",
    "covariance_sqrt",
    "fourier_basis",
    "spectral_amplitudes",
    "min_distance_covariance",
    "copula_covariance",
    "ising_correlation",
    "metropolis_ising",
    "paper_metropolis_ising",
    # marginals and their exact statistics
    "Marginal",
    "GaussianMarginal",
    "NLGPMarginal",
    "KurMarginal",
    "RademacherMarginal",
    "StudentTMarginal",
    "SphereMarginal",
    "RadialEllipticalMarginal",
    "nlgp_normaliser",
    "nlgp_transform",
    "nlgp_excess_kurtosis",
    "kur_normaliser",
    "kur_transform",
    "kur_excess_kurtosis",
    "kur_excess_kurtosis_zero",
]
