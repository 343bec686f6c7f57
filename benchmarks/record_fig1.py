"""Record paper Fig. 1 (right, committee panel) at the paper's full scale for the book (not a test):

    nice -n 19 .venv/bin/python benchmarks/record_fig1.py book/data/fig1_full_scale.npz

One run of ``experiments.many_neurons.train_population`` with ``FIG1_GRID`` (NLGP(100) on a 30 x 30
torus, xi = (1, 2), soft committee machine K = 20, ReLU, no bias, init 0.01, lr 3, batch 10 000,
10 000 steps) from ``jax.random.key(KEY)``, with 21 checkpoints. About 12 minutes on an idle 2-core
machine -- too long for a chapter, so the chapter *Receptive fields in two dimensions* and the landing
page read this file. It holds, as plain arrays (``np.load`` without pickle):

* ``fields``: (K, 900) float32, the learned fields at the last step (row-major over the grid);
* ``initial``: (K, 900) float32, the fields at step 0;
* ``steps``: (C,) checkpoint steps; ``share``: (C, K) the 8 x 8 box share of every field
  (``field_analysis.window_share``), ``ipr``: (C, K) its IPR (``metrics.ipr``), at every checkpoint;
* ``meta``: a JSON string (command, settings, key, wall and CPU seconds, machine, jax version, date).
"""

from __future__ import annotations

import dataclasses
import json
import os
import shlex
import sys
import time

import jax
import numpy as np
from data_sampling import cpu_model  # sibling benchmark (its directory is on sys.path when run as a script)

import localization
from localization import field_analysis, metrics
from localization.experiments import many_neurons as mn

localization.enable_float64()  # float64 for the library (SplitMix64 bits, float64 sampling)

KEY, CHECKPOINTS, BOX = 0, 21, 8


def record(path: str) -> dict:
    settings = mn.FIG1_GRID.replace(checkpoints=CHECKPOINTS)
    wall, cpu = time.perf_counter(), time.process_time()
    pop = mn.train_population(jax.random.key(KEY), settings)
    wall, cpu = time.perf_counter() - wall, time.process_time() - cpu
    if pop.diverged.any():
        raise RuntimeError("the full-scale run diverged; nothing recorded")
    fields = pop.fields[0]  # (C, K, N)
    share = np.stack([field_analysis.window_share(f, BOX, settings.shape) for f in fields])
    ipr = np.asarray(metrics.ipr(fields), np.float64)
    meta = {
        "command": "nice -n 19 .venv/bin/python benchmarks/record_fig1.py " + shlex.quote(path),
        "settings": {k: list(v) if isinstance(v, tuple) else v for k, v in dataclasses.asdict(settings).items()},
        "key": KEY,
        "box": BOX,
        "wall_seconds": round(wall, 1),
        "cpu_seconds": round(cpu, 1),
        "cpu_count": os.cpu_count(),
        "cpu": cpu_model(),
        "jax_version": jax.__version__,
        "date": time.strftime("%Y-%m-%d"),
    }
    steps = np.rint(pop.times / settings.lr).astype(np.int64)
    np.savez_compressed(
        path,
        fields=fields[-1].astype(np.float32),
        initial=fields[0].astype(np.float32),
        steps=steps,
        share=share,
        ipr=ipr,
        meta=np.array(json.dumps(meta)),
    )
    return meta


if __name__ == "__main__":
    if len(sys.argv) != 2:
        sys.exit(__doc__)
    print(json.dumps(record(sys.argv[1]), indent=1))
