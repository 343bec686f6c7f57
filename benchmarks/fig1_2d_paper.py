"""The paper's own NLGP sampler at the Fig. 1 (right) settings, timed (run by ``benchmarks/fig1_2d.py --paper``).

    git clone https://github.com/leonlufkin/Localization /tmp/paper   # (measured at commit 320fde3)
    nice -n 19 .venv/bin/python benchmarks/fig1_2d_paper.py /tmp/paper 5

Loads ``localization/datasets/nonlinear_gp.py`` of that checkout with only the two modules it needs
(``datasets/base.py`` and ``utils/modeling.py``; its package ``__init__`` files import plotting and
cluster tools that are not installed here) under stand-in package modules, in a process that does not
import this book's library (same package name; the paper's code runs with JAX's default float32 and
threefry keys). Builds ``NonlinearGPDataset(xi=(1, 2), gain=100, num_dimensions=30, dim=2)`` with
10 000 x 10 000 exemplars, as the reference code does for this figure, and times ``dataset[i*B:(i+1)*B]``
for B = 10 000 (both classes drawn for every index through the dense 900 x 900 root, then subsampled).
Prints one JSON line: seconds per batch (wall min/median/max, CPU min) and the construction time.
"""

import importlib.util
import json
import os
import sys
import time
import types

import jax
import numpy as np


def load(name, path):
    spec = importlib.util.spec_from_file_location(name, path)
    mod = importlib.util.module_from_spec(spec)
    sys.modules[name] = mod
    spec.loader.exec_module(mod)
    return mod


def main(repo, batches, B=10_000):
    root = os.path.join(repo, "localization")
    for name in ("localization", "localization.datasets"):
        pkg = types.ModuleType(name)
        pkg.__path__ = []
        sys.modules[name] = pkg
    modeling = load("localization.utils.modeling", os.path.join(root, "utils", "modeling.py"))
    utils = types.ModuleType("localization.utils")
    utils.__dict__.update({k: getattr(modeling, k) for k in dir(modeling) if not k.startswith("_")})
    sys.modules["localization.utils"] = utils
    load("localization.datasets.base", os.path.join(root, "datasets", "base.py"))
    nl = load("localization.datasets.nonlinear_gp", os.path.join(root, "datasets", "nonlinear_gp.py"))
    t0 = time.perf_counter()
    d = nl.NonlinearGPDataset(
        key=jax.random.key(0), xi=(1, 2), gain=100.0, num_dimensions=30, num_exemplars=B * 10_000, dim=2
    )
    construct = time.perf_counter() - t0
    jax.block_until_ready(d[0:B][0])  # compile
    walls, cpus = [], []
    for i in range(1, batches + 1):
        w, c = time.perf_counter(), time.process_time()
        jax.block_until_ready(d[i * B : (i + 1) * B][0])
        walls.append(time.perf_counter() - w)
        cpus.append(time.process_time() - c)
    out = {
        "batch": B,
        "wall": [min(walls), float(np.median(walls)), max(walls)],
        "cpu": min(cpus),
        "construct": construct,
        "x64": bool(jax.config.jax_enable_x64),
    }
    print(json.dumps(out))


if __name__ == "__main__":
    main(sys.argv[1], int(sys.argv[2]) if len(sys.argv) > 2 else 5)
