"""Chapter back-ends: the sweeps and comparisons the chapters (and ``benchmarks/bench.py``) call.

One module per chapter or figure; they depend downward on ``theory``, ``train``, ``models``,
``metrics`` and ``data``, and nothing below imports them.

* ``simulation`` — *Localization in simulation* (paper §4.1, Fig. 5): IPR sweeps, Fig. 5, the
  Kur × length-scale phase diagram;
* ``comparison`` — *Effective dynamics vs simulation* (paper §4.2, Figs. 3, 8): SGD and the
  effective flow from the same initialisations, flow sweeps, the Monte Carlo SGD drift;
* ``data_properties`` — *Idealized naturalistic data*: measured S1–S3 statistics of a data model;
* ``many_neurons`` — *Many neurons* (paper §4.4, Figs. 6, 7 and 1 right): populations of receptive
  fields of the committee machine and the two-layer network, on rings and tori.

The names in ``__all__`` are re-exported here (``experiments.fig5(key)``).
"""

from localization.experiments import comparison, data_properties, many_neurons, simulation
from localization.experiments.comparison import (
    Comparison,
    MonteCarloDrift,
    compare_flow_and_sgd,
    flow_sweep,
    monte_carlo_drift,
)
from localization.experiments.data_properties import property_statistics
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
    "comparison",
    "data_properties",
    "many_neurons",
    "simulation",
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
