"""Chapter back-ends: what a chapter computes by sampling, training or measuring runs.

``benchmarks/bench.py`` times them too.

One module per chapter that computes anything, named after the chapter; they depend downward on
``theory``, ``train``, ``models``, ``metrics`` and ``data``, and nothing in the library below them
imports them (``figures`` may):

* ``intro`` — *Introduction*: the phenomenon's two training runs and the gain sweep of its explorer;
* ``data_properties`` — *Idealized naturalistic data*: measured S1–S3 statistics of a data model, the
  samples its figures show, the paper code's own samplers;
* ``simulation`` — *Localization in simulation* (paper §4.1, Fig. 5): IPR sweeps, Fig. 5, the
  Kur × length-scale phase diagram; beyond the paper ``large_n`` (Fig. 5 at several input sizes),
  ``data_init`` (the final field's variance split into data and initialisation parts), and for the
  fields just below zero excess kurtosis ``near_zero`` (SGD at the paper's settings over seeds, and at
  several batches), ``near_zero_summary`` (what those records say) and ``bump_flow`` (the effective
  flow's bump fixed point and its spectrum);
* ``amplifier`` — *The amplifier φ*: assumption A2's discrepancy by conditional Monte Carlo;
* ``elliptical`` — *Elliptical data cannot localize* (paper §3.3, Fig. 4): the radial constant κ,
  App. C.4's steps by quadrature and Monte Carlo, SGD against the exact flow, the committee on
  elliptical laws;
* ``effective_dynamics`` — *Effective dynamics vs simulation* (paper §4.2, Figs. 3, 8): SGD and the
  effective flow from the same initialisations, flow sweeps, the Monte Carlo SGD drift; in the same
  chapter ``flow_agreement`` (paper Fig. 3's runs, their final fields' IPR, peaks and modes, the peak
  count), ``flow_breakdown`` (paper Fig. 8, where the flow stops describing SGD) and
  ``kurtosis_threshold`` (Claim 3.2's sweeps over the kurtosis parameter);
* ``mechanism`` — *The mechanism*: its tasks, flows from many starts, gains and Fourier Jacobian; in the
  same chapter ``onset_scaling`` (where the constant state loses stability as N grows: g*(N), κ(g*) ≈ C/N);
* ``gaussian`` — *ReLU on Gaussian data*: SGD on Gaussian clones against the exact flow, the flow's
  Jacobian in Fourier modes, the modes a field settles on;
* ``two_dimensions`` — *Receptive fields in two dimensions*: the committee's runs of Fig. 1;
* ``step_size`` — *Effective dynamics vs simulation*: SGD and the flow over learning rates and
  initial scales, the spectral step-size thresholds;
* ``many_neurons`` — *Many neurons* (paper §4.4, Figs. 6, 7 and 1 right): populations of receptive
  fields of the committee machine and the two-layer network, on rings and tori (also *Receptive
  fields in two dimensions*);
* ``ica`` — *Independent component analysis*: FastICA (scikit-learn) on samples of a task or a data model;
* ``gabor`` — *The Gabor hypothesis*: periodic Gabors and their least-squares fits;
* ``uncertainty`` — *The Gabor hypothesis*: Breitenberger's periodic uncertainty product, its bound and minimum;
* ``sigmoid`` — *Sigmoid networks*: Monte Carlo counterparts of ``theory.sigmoid``;
* ``specialisation`` — *Frequency specialisation in sigmoid networks*: populations at shifted length-scales, the reduced
  two-population model;
* ``gdln`` — *Gated deep linear networks*: gate flips along training runs, the frozen gate's OLS
  field, Monte Carlo GDLN moments, random half-space gates;
* ``task_value`` — *Many neurons*: held-out task scores of localized and delocalized fields;
* ``hypercube`` — *Signals on the hypercube*: Monte Carlo laws of sign(Z) on small rings, the flow's task laws;
* ``hypercube_basins`` — *Signals on the hypercube*: the flow from many starts to certified fixed points, their
  classes up to the ring's symmetries, peak-site predictors; ``hypercube_basin_scaling`` (basin fractions against n);
* ``own_data`` — *Real images* and ``python -m localization predict``: the paper's rule on a data set
  (excess kurtosis, the amplifier with its bootstrap band, the verdict) and a short training run on it;
* ``real_images`` — *Real images*: the paper's prediction, the finite-N criterion, the effective and exact flows
  and SGD on rows and patches of the two photographs (on a ring by random cyclic shifts);
  ``real_image_survey`` (every photograph, preprocessing and task in one call); ``real_image_fields`` (the single
  neuron, the committee machine and FastICA on the clone task, rows and 8 × 8 patches, and the shapes of their
  fields: localized, size, frequency, even/odd phase, orientation and its selectivity).

Every module is listed in ``__all__``; the names of the first four chapters' back-ends are also
re-exported here (``experiments.fig5(key)``); the others are used as modules
(``experiments.gdln.gate_flips(...)``).
"""

from localization.experiments import (
    amplifier,
    bump_flow,
    data_init,
    data_properties,
    effective_dynamics,
    elliptical,
    flow_agreement,
    flow_breakdown,
    gabor,
    gaussian,
    gdln,
    hypercube,
    hypercube_basin_scaling,
    hypercube_basins,
    ica,
    intro,
    kurtosis_threshold,
    large_n,
    many_neurons,
    mechanism,
    near_zero,
    near_zero_summary,
    onset_scaling,
    own_data,
    real_image_fields,
    real_image_survey,
    real_images,
    sigmoid,
    simulation,
    specialisation,
    step_size,
    task_value,
    two_dimensions,
    uncertainty,
)
from localization.experiments.data_properties import property_statistics
from localization.experiments.effective_dynamics import (
    Comparison,
    MonteCarloDrift,
    compare_flow_and_sgd,
    flow_sweep,
    monte_carlo_drift,
)
from localization.experiments.many_neurons import (
    FIG1_CHAPTER,
    FIG1_GRID,
    FIG1_RECORD,
    FIG6_KUR4,
    FIG6_KUR10,
    FIG7_RELU_KUR30,
    FIG7_SIGMOID_KUR4,
    Fig1Record,
    PopulationRun,
    PopulationSettings,
    fig1_populations,
    fig6_populations,
    fig7_populations,
    read_fig1_record,
    train_population,
)
from localization.experiments.simulation import (
    PAPER_FIG5,
    Fig5Result,
    Fig5Settings,
    IPRSweep,
    PhaseDiagram,
    fig5,
    fig5_table,
    grouped_ipr_sweep,
    init_neurons,
    ipr_sweep,
    phase_diagram,
)

__all__ = [
    "amplifier",
    "bump_flow",
    "data_init",
    "data_properties",
    "effective_dynamics",
    "elliptical",
    "flow_agreement",
    "flow_breakdown",
    "gabor",
    "gaussian",
    "gdln",
    "hypercube",
    "hypercube_basin_scaling",
    "hypercube_basins",
    "ica",
    "intro",
    "kurtosis_threshold",
    "large_n",
    "many_neurons",
    "mechanism",
    "near_zero",
    "near_zero_summary",
    "onset_scaling",
    "own_data",
    "real_image_fields",
    "real_image_survey",
    "real_images",
    "runs",
    "sigmoid",
    "simulation",
    "specialisation",
    "step_size",
    "task_value",
    "two_dimensions",
    "uncertainty",
    "Comparison",
    "MonteCarloDrift",
    "compare_flow_and_sgd",
    "flow_sweep",
    "monte_carlo_drift",
    "property_statistics",
    "FIG1_GRID",
    "FIG1_CHAPTER",
    "FIG1_RECORD",
    "Fig1Record",
    "read_fig1_record",
    "fig1_populations",
    "FIG6_KUR4",
    "FIG6_KUR10",
    "FIG7_RELU_KUR30",
    "FIG7_SIGMOID_KUR4",
    "PopulationRun",
    "PopulationSettings",
    "train_population",
    "fig6_populations",
    "fig7_populations",
    "PAPER_FIG5",
    "Fig5Result",
    "Fig5Settings",
    "IPRSweep",
    "PhaseDiagram",
    "fig5",
    "fig5_table",
    "grouped_ipr_sweep",
    "init_neurons",
    "ipr_sweep",
    "phase_diagram",
]


def __getattr__(name: str):
    """Import ``runs`` on first access (PEP 562).

    ``runs`` is also a command (``python -m localization.experiments.runs``), which Python warns about
    when the package has imported the module already.
    """
    if name == "runs":
        import importlib

        return importlib.import_module(f"{__name__}.runs")
    raise AttributeError(f"module {__name__!r} has no attribute {name!r}")
