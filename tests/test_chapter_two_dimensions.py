"""The two-dimensions chapter's recorded full-scale run (``book/data/fig1_full_scale.npz``).

Consistency, not evidence: the record is the run it says it is. Its settings are the paper's
(``FIG1_GRID``), and the share and IPR it stores for the final fields are those recomputed from its
stored float32 fields. The chapter checks what that one run shows.
"""

import numpy as np

from localization import experiments as ex
from localization import field_analysis, metrics


def test_fig1_record_is_the_run_it_says_it_is():
    record = ex.read_fig1_record()
    assert record.settings == ex.FIG1_GRID.replace(checkpoints=len(record.steps)), record.settings
    recomputed = field_analysis.window_share(record.fields, record.meta["box"], ex.FIG1_GRID.shape)
    assert np.max(np.abs(recomputed - record.share[-1])) < 1e-5
    assert np.max(np.abs(np.asarray(metrics.ipr(record.fields)) - record.ipr[-1])) < 1e-5
