"""Paper Figs. 6 and 7 at the paper's scale (benchmark, not a test; run by hand, sparingly):

    .venv/bin/python benchmarks/many_neurons.py                       # 3 runs per figure
    .venv/bin/python benchmarks/many_neurons.py --runs 5 --write benchmarks/results

Each figure is the ``experiments.many_neurons`` settings constant it names, trained once per run with
``train_population`` (one network, ``inits=1``, as the paper draws one network per panel; and the
chapter's 8 initialisations, vmapped on one data stream, for comparison):

* Fig. 6 (left, centre): the soft committee machine on Kur(10) and on Kur(4) (``FIG6_KUR10``,
  ``FIG6_KUR4``: K = 10, N = 40, batch 1000, 5000 steps) -- the two panels together;
* Fig. 7 (top): the two-layer sigmoid network on Kur(4) (``FIG7_SIGMOID_KUR4``: batch 1000, 5000 steps);
* Fig. 7 (bottom): the two-layer ReLU network with K = 100 on Kur(30) (``FIG7_RELU_KUR30``: batch 5000,
  2000 steps).

The first call of each figure includes compilation and is reported apart; the runs after it give
min / median / max wall time and the minimum CPU time of this process (all threads). Target (issue 13):
each figure under 2 minutes on this 2-core machine. ``--write DIR`` writes DIR/many_neurons.md.
"""

from __future__ import annotations

import argparse
import os
import time

import jax
import numpy as np
from data_sampling import cpu_model  # sibling benchmarks (their directory is on sys.path when run as a script)
from fig1_2d import summary, timed

import localization
from localization.experiments import many_neurons as mn

localization.enable_float64()  # float64 for the library (SplitMix64 bits, float64 sampling)

FIGURES = {
    "Fig. 6 (SCM, Kur(10) and Kur(4))": (mn.FIG6_KUR10, mn.FIG6_KUR4),
    "Fig. 7 top (two-layer sigmoid, Kur(4))": (mn.FIG7_SIGMOID_KUR4,),
    "Fig. 7 bottom (two-layer ReLU, K = 100, Kur(30))": (mn.FIG7_RELU_KUR30,),
}
TARGET_S = 120.0


def figure_run(settings, inits):
    """One call that trains every panel of a figure with ``inits`` initialisations (fresh keys per call
    would not change the cost; the same key keeps runs comparable)."""
    key = jax.random.key(0)
    return lambda: [
        mn.train_population(jax.random.fold_in(key, j), s.replace(inits=inits)).fields for j, s in enumerate(settings)
    ]


def measure(runs, inits_list):
    rows = []
    for name, settings in FIGURES.items():
        for inits in inits_list:
            fn = figure_run(settings, inits)
            first, _ = timed(fn, 1)
            walls, cpus = timed(fn, runs)
            row = {"figure": name, "inits": inits, "first_call": float(first[0]), **summary(walls, cpus)}
            rows.append(row)
            w = row["wall"]
            print(
                f"{name}, {inits} init(s): first call {first[0]:.1f} s; "
                f"then {w[0]:.1f} / {w[1]:.1f} / {w[2]:.1f} s (min/median/max), CPU {row['cpu']:.1f} s",
                flush=True,
            )
    return rows


def write_results(res, directory):
    info = res["info"]
    lines = [
        f"Measured {info['date']} with `benchmarks/many_neurons.py --write`: {info['cpus']} CPUs ({info['cpu']}), "
        f"jax {info['jax']}, float32; {res['runs']} runs after a first (compiling) call; load average "
        f"{res['load'][0]:.1f} before, {res['load'][1]:.1f} after (wall times are upper bounds for an idle "
        "machine; CPU is the work of this process, all threads). Seconds per figure (all its panels).",
        "",
        "| figure | networks per panel | first call | min | median | max | CPU (min) |",
        "| --- | ---: | ---: | ---: | ---: | ---: | ---: |",
    ]
    for r in res["rows"]:
        w = r["wall"]
        lines.append(
            f"| {r['figure']} | {r['inits']} | {r['first_call']:.1f} | {w[0]:.1f} | {w[1]:.1f} | {w[2]:.1f} "
            f"| {r['cpu']:.1f} |"
        )
    worst = max(r["first_call"] for r in res["rows"] if r["inits"] == 1)
    verdict = "under" if worst < TARGET_S else "over"
    lines += [
        "",
        f"Slowest figure at the paper's scale (one network per panel, compilation included): "
        f"{worst:.1f} s, {verdict} the {TARGET_S:.0f}-second target.",
        "",
    ]
    os.makedirs(directory, exist_ok=True)
    with open(os.path.join(directory, "many_neurons.md"), "w") as f:
        f.write("\n".join(lines))


def main():
    p = argparse.ArgumentParser(description=__doc__, formatter_class=argparse.RawDescriptionHelpFormatter)
    p.add_argument("--runs", type=int, default=3)
    p.add_argument("--inits", type=int, nargs="+", default=[1, 8], help="networks per panel (1 = the paper's figure)")
    p.add_argument("--write", metavar="DIR", help="also write DIR/many_neurons.md")
    args = p.parse_args()
    info = {"jax": jax.__version__, "cpus": os.cpu_count(), "cpu": cpu_model(), "date": time.strftime("%Y-%m-%d")}
    load0 = os.getloadavg()[0]
    rows = measure(args.runs, args.inits)
    res = {"info": info, "runs": args.runs, "load": [load0, os.getloadavg()[0]], "rows": rows}
    if args.write:
        write_results(res, args.write)
    print(np.round([r["first_call"] for r in rows], 1))


if __name__ == "__main__":
    main()
