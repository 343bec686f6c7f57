"""Chapter back-ends: the sweeps and comparisons the chapters (and ``benchmarks/bench.py``) call.

One module per chapter or figure; they depend downward on ``theory``, ``train``, ``models``,
``metrics`` and ``data``, and nothing below imports them.

* ``simulation`` — *Localization in simulation* (paper §4.1, Fig. 5): IPR sweeps, Fig. 5, the
  Kur × length-scale phase diagram;
* ``comparison`` — *Effective dynamics vs simulation* (paper §4.2, Figs. 3, 8): SGD and the
  effective flow from the same initialisations, flow sweeps, the Monte Carlo SGD drift;
* ``data_properties`` — *Idealized naturalistic data*: measured S1–S3 statistics of a data model.

The names in ``__all__`` are re-exported here (``experiments.fig5(key)``).
"""

from localization.experiments import comparison, data_properties, simulation
from localization.experiments.comparison import (
    Comparison,
    MonteCarloDrift,
    compare_flow_and_sgd,
    flow_sweep,
    monte_carlo_drift,
)
from localization.experiments.data_properties import property_statistics
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
    "simulation",
    "Comparison",
    "MonteCarloDrift",
    "compare_flow_and_sgd",
    "flow_sweep",
    "monte_carlo_drift",
    "property_statistics",
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
