"""The 2-D figure (paper Fig. 1 right) at full and at chapter scale (not a test; run by hand, under nice):

    nice -n 19 .venv/bin/python benchmarks/fig1_2d.py --runs 5 --write benchmarks/results
    nice -n 19 .venv/bin/python benchmarks/fig1_2d.py --only split      # the per-step cost split alone
    nice -n 19 .venv/bin/python benchmarks/fig1_2d.py --only ipr        # does the chapter scale localize (IPR)

Settings (issue 13, the reference code's for this figure): NLGP(g = 100) on a 30 x 30 periodic grid,
xi = (1, 2), soft committee machine K = 20, ReLU, no bias, init 0.01 (``initialisation.init_params``), lr 3.0,
online SGD with a fresh batch every step (``train.train_online``, ``prng="splitmix"``, float32).
Full scale: batch 10 000, 10 000 steps. Chapter scale (``experiments.many_neurons.FIG1_CHAPTER``, the
chapter *Receptive fields in two dimensions*): a 20 x 20 torus, batch 1000, 5000 steps.

``split``: the cost of one full-scale step, taken apart. Cumulative pipelines, each jitted once
inside a ``lax.scan`` of ``--split-steps`` steps whose (batch, 900) float32 carry receives the
stage's output (so each stage is materialised once per step, as in training):

    bits       SplitMix64 words, jax.random.bits(key, (B, 900), uint64), converted to float32
    normal     + the Gaussian draw (prng.normal: Box-Muller on one folded angle per word)
    classes    + the labels and the per-class spectral amplitudes (where(y, a(xi=2), a(xi=1)))
    grid map   + the map to the sites (dense per-axis products at 30 x 30): the task with the
               identity copula map, LengthscaleTask.of(data.Gaussian, xi=(1, 2)).sample
    sample     + the NLGP transform erf(g z)/Z(g): this is LengthscaleTask.sample itself
    gradient   the committee's MSE gradient on a batch (base + t, base fixed), and the same
               pipeline without the gradient (identity), to subtract

Wall (min / median / max over ``--runs``) and the process's CPU time (min) per step; the stage cost is
the difference of consecutive medians. CPU time is the work; on an idle 2-core machine the wall time
is about CPU / 1.9 (XLA spreads large loops and products over both cores), under load it is more.

``train``: ``train.train_online`` itself. Full batch: ``--probe-steps`` steps per run (compiled once
before the runs), per-step time extrapolated linearly to 10 000 steps -- an extrapolation, since
the step cost does not depend on the step. Chapter scale: the whole run, compilation excluded and
(separately) included.

``ipr``: do the fields localize at chapter scale? Mean IPR over the 20 neurons (``metrics.ipr`` of the
flattened fields) at the end of the chapter-scale run for ``--ipr-seeds`` seeds, and of the initial
fields. (How the full-scale run localizes along training: ``benchmarks/record_fig1.py``.)

``--paper REPO``: the paper's own sampler from a checkout of its repository (``fig1_2d_paper.py``).

Findings (2026-11-26, this 2-core AMD EPYC shared with two other workers, load average 4-8, so wall
times are pessimistic; CPU times are per step at batch 10 000, the cost split measured pinned to one
core with ``taskset -c 1`` so that no time is spent waiting for the other thread):

- The step costs ~137 CPU-ms (``train_online``), i.e. ~23 CPU-minutes for 10 000 steps, ~12 minutes on
  an idle 2-core machine (XLA keeps both cores busy: CPU/wall 1.85-1.89 on a quiet machine). Split
  (two pinned runs): random bits 17.5-18.3, Gaussian draw 8.3-8.9, labels and amplitudes 1-2, grid map
  67-72, NLGP transform 4-7 (sampling ~103), gradient 25-34.
- Floor for this algorithm on this CPU: float32 matmul peak 63 GFLOP/s per core (2048^3, CPU time);
  a step needs 1.08 GFLOP for the grid map (2 B 900 (30 + 30)) and 0.72 GFLOP for the gradient
  (forward and backward, 2 x 2 B 900 K): 29 CPU-ms at peak; the element-wise work at its measured
  rate (bits, draw, transform, amplitudes) 35 CPU-ms. So >= 64 CPU-ms per step, >= 5.6 minutes for
  10 000 steps on two perfectly used cores: the 5-minute target is out of reach here even at peak.
  The 9e10 normals alone are 260 CPU-s (3.5e8 per CPU-second); the 1.8e13 FLOPs 290 CPU-s at peak.
  The current step is 2.1x the floor; most of the gap is the grid map (16 GFLOP/s: products with
  K = N = 30 plus one 30 x 30 transpose per sample, ~17 CPU-ms, which batch-major products cannot avoid).
- Measured and rejected (all would keep the sampled law; the first changes the bits): two normals
  per 64-bit word (Box-Muller pair, 23 + 23 bits and two signs): 50-59 CPU-ms vs 29 for the normals
  (joining the halves breaks the fused loop); the feature-major layout (normals generated directly in
  (900, B) order -- the same bits, XLA fuses the transposed generation -- both axis maps as plain and
  batched GEMMs with no transpose, gradient on the (900, B) array): 132-221 vs 112 CPU-ms; the batch in
  5-20 cache-sized chunks: 119-135 vs 130 (compute-bound, not memory-bound);
  ``--xla_cpu_prefer_vector_width=256``: within noise; disabling the YNN dot fusions
  (``--xla_cpu_experimental_ynn_fusion_type=``): grid map 79 vs 67 CPU-ms. The NLGP transform (XLA's
  float32 erf) is 7 CPU-ms, not worth replacing. Everything is float32 already.
- A first chapter scale on the 30 x 30 torus (batch 2000, 2000 steps) did not localize (mean IPR 0.0054
  and 0.0056 for seeds 0, 1; initial 0.0033): the full-scale run (``record_fig1.py``, 2026-11-27) only
  localizes between steps 2000 and 4000. The chapter now uses a 20 x 20 torus, batch 1000, 5000 steps
  (localized by step 2000 for seeds 0-7; 20-26 s wall at load 2-6).
- The paper's sampler (its repository at 320fde3, float32, threefry keys, both classes through the
  dense 900 x 900 root for every example, then subsampled): 1.2-1.5 CPU-s per batch of 10 000
  (3-17 s wall under load), ~10x our whole step before its own training; 10 000 batches are
  >= 3.4 CPU-hours, about two hours on an idle 2-core machine for the sampling alone (an estimate).
"""

from __future__ import annotations

import argparse
import json
import os
import time

import jax
import jax.numpy as jnp
import numpy as np
from data_sampling import cpu_model  # the sibling benchmark (its directory is on sys.path when run as a script)

import localization
from localization import data, initialisation, metrics, models, train
from localization.data import spectral
from localization.experiments import many_neurons as mn
from localization.prng import splitmix_key

localization.enable_float64()  # float64 for the library (SplitMix64 bits, float64 sampling)

SHAPE, N, K = (30, 30), 900, 20
XI, GAIN, INIT, LR = (1.0, 2.0), 100.0, 0.01, 3.0
FULL = {"batch": 10_000, "steps": 10_000}
# the chapter's scale (experiments.many_neurons.FIG1_CHAPTER): a 20 x 20 torus, batch 1000, 5000 steps
CHAPTER = {"batch": mn.FIG1_CHAPTER.batch, "steps": mn.FIG1_CHAPTER.steps, "shape": mn.FIG1_CHAPTER.shape}


def task():
    return data.LengthscaleTask.of(data.NLGP, xi=XI, gain=GAIN)


def timed(fn, runs):
    """(walls, cpus) in seconds of ``runs`` calls of ``fn`` (its result blocked on)."""
    walls, cpus = [], []
    for _ in range(runs):
        w, c = time.perf_counter(), time.process_time()
        jax.block_until_ready(fn())
        walls.append(time.perf_counter() - w)
        cpus.append(time.process_time() - c)
    return np.array(walls), np.array(cpus)


def summary(walls, cpus, per=1.0):
    """min / median / max wall and min CPU, divided by ``per`` (e.g. ms per step)."""
    return {
        "wall": [float(np.min(walls) / per), float(np.median(walls) / per), float(np.max(walls) / per)],
        "cpu": float(np.min(cpus) / per),
    }


# ------------------------------------------------------------------------------------------------
# (1) the cost split of one full-batch step
# ------------------------------------------------------------------------------------------------
def split_stages(B):
    """Cumulative pipelines that rebuild ``LengthscaleTask.sample`` (same keys, same bits) stage by stage."""
    t, gauss = task(), data.LengthscaleTask.of(data.Gaussian, xi=XI)
    a0 = jnp.asarray(spectral.grid_amplitudes(XI[0], SHAPE), jnp.float32)
    a1 = jnp.asarray(spectral.grid_amplitudes(XI[1], SHAPE), jnp.float32)

    def classes(k):
        ky, k0, _ = jax.random.split(k, 3)  # as LengthscaleTask.sample splits its key
        y = jax.random.bernoulli(ky, 0.5, (B,))
        return spectral.standard_normals(k0, (B, N), jnp.float32) * jnp.where(y[:, None], a1, a0)

    return {
        "carry": lambda k: jnp.broadcast_to(jax.random.key_data(k)[0].astype(jnp.float32), (B, N)),
        "bits": lambda k: jax.random.bits(jax.random.split(k, 3)[1], (B, N), jnp.uint64).astype(jnp.float32),
        "normal": lambda k: spectral.standard_normals(jax.random.split(k, 3)[1], (B, N), jnp.float32),
        "classes": classes,
        # the same sampler with the identity copula map: everything but the NLGP transform
        "grid map": lambda k: gauss.sample(k, B, SHAPE, jnp.float32)[0],
        "sample": lambda k: t.sample(k, B, SHAPE, jnp.float32)[0],
    }


def scan_cost(stage, B, steps, runs, key):
    """Seconds per step of ``stage(key_t) -> (B, N)`` added into a (B, N) carry for ``steps`` steps."""

    @jax.jit
    def loop(key):
        def body(c, s):
            return c + stage(jax.random.fold_in(key, s)), None

        return jax.lax.scan(body, jnp.zeros((B, N), jnp.float32), jnp.arange(steps))[0]

    jax.block_until_ready(loop(key))  # compile
    return timed(lambda: loop(key), runs)


def gradient_stages(B):
    W = jnp.full((K, N), INIT, jnp.float32) * jnp.cos(jnp.arange(N, dtype=jnp.float32))
    base = jnp.asarray(np.random.default_rng(0).standard_normal((B, N)), jnp.float32)
    y = (base[:, 0] > 0).astype(jnp.float32)
    grad = jax.grad(lambda w, x: models.mse(w, x, y, model="committee", activation="relu"))

    def with_gradient(k):
        x = base + jax.random.key_data(k)[0].astype(jnp.float32)
        return x + jnp.sum(grad(W, x))

    def identity(k):
        return base + jax.random.key_data(k)[0].astype(jnp.float32)

    return {"identity": identity, "gradient": with_gradient}


def cost_split(runs, steps):
    B = FULL["batch"]
    key = splitmix_key(jax.random.key(0))
    rows = {}
    print(f"\n(split) ms per step at batch {B} x {N} (scan of {steps} steps; wall min/median/max, cpu min)")
    for name, stage in {**split_stages(B), **gradient_stages(B)}.items():
        rows[name] = summary(*scan_cost(stage, B, steps, runs, key), per=steps / 1e3)
        w = rows[name]["wall"]
        print(f"  {name:9s} wall {w[0]:7.1f} / {w[1]:7.1f} / {w[2]:7.1f}   cpu {rows[name]['cpu']:7.1f}", flush=True)
    return rows


def components(rows):
    """Stage costs: differences of consecutive medians (wall) and minima (cpu), ms per step."""
    order = ["bits", "normal", "classes", "grid map", "sample"]
    out, prev = {}, rows["carry"]
    names = {
        "bits": "random bits (SplitMix64 words)",
        "normal": "Gaussian draw (from the words)",
        "classes": "labels and per-class amplitudes",
        "grid map": "grid map (to the 900 sites)",
        "sample": "NLGP transform",
    }
    for s in order:
        out[names[s]] = (rows[s]["wall"][1] - prev["wall"][1], rows[s]["cpu"] - prev["cpu"])
        prev = rows[s]
    g, i = rows["gradient"], rows["identity"]
    out["gradient (committee, K = 20)"] = (g["wall"][1] - i["wall"][1], g["cpu"] - i["cpu"])
    return out


# ------------------------------------------------------------------------------------------------
# (2) train_online: full batch (extrapolated) and chapter scale (whole run)
# ------------------------------------------------------------------------------------------------
def run_training(batch, steps, seed=0, checkpoints=2, shape=SHAPE):
    params = initialisation.init_params(jax.random.key(1000 + seed), K, shape, INIT)
    return train.train_online(
        jax.random.key(seed),
        task(),
        params.w,
        lr=LR,
        batch=batch,
        steps=steps,
        checkpoints=checkpoints,
        n=shape,
        model="committee",
        activation="relu",
    )


def training_costs(runs, probe_steps):
    out = {}
    B = FULL["batch"]
    print(f"\n(train) train_online, batch {B}, {probe_steps} steps per run (extrapolated to {FULL['steps']})")
    first, _ = timed(lambda: run_training(B, probe_steps).weights, 1)  # compiles
    walls, cpus = timed(lambda: run_training(B, probe_steps).weights, runs)
    out["full_step"] = summary(walls, cpus, per=probe_steps / 1e3)  # ms per step
    out["full_first_call"] = float(first[0])
    out["probe_steps"] = probe_steps
    total = [v * FULL["steps"] / 1e3 for v in out["full_step"]["wall"]]  # seconds
    out["full_extrapolated"] = total
    s = out["full_step"]
    print(
        f"  ms/step wall {s['wall'][0]:.1f} / {s['wall'][1]:.1f} / {s['wall'][2]:.1f}, cpu {s['cpu']:.1f}; "
        f"extrapolated to {FULL['steps']} steps: {total[0] / 60:.1f} / {total[1] / 60:.1f} / {total[2] / 60:.1f} min",
        flush=True,
    )
    b, n = CHAPTER["batch"], CHAPTER["steps"]
    jax.clear_caches()
    shape = CHAPTER["shape"]
    first, _ = timed(lambda: run_training(b, n, shape=shape).weights, 1)
    walls, cpus = timed(lambda: run_training(b, n, shape=shape).weights, runs)
    out["chapter"] = summary(walls, cpus)  # seconds per run
    out["chapter_first_call"] = float(first[0])
    c = out["chapter"]
    print(
        f"  chapter scale ({shape}, batch {b}, {n} steps): "
        f"wall {c['wall'][0]:.1f} / {c['wall'][1]:.1f} / {c['wall'][2]:.1f} s "
        f"(cpu {c['cpu']:.1f} s); first call incl. compile {first[0]:.1f} s",
        flush=True,
    )
    return out


# ------------------------------------------------------------------------------------------------
# (3) does the chapter scale still localize?
# ------------------------------------------------------------------------------------------------
def fields(tr):
    """(C, K, N) first-layer weights of a committee trajectory (``Params`` or a plain array)."""
    return np.asarray(tr.weights.w if isinstance(tr.weights, models.Params) else tr.weights)


def mean_ipr(w):
    return float(np.mean(np.asarray(metrics.ipr(jnp.asarray(w, jnp.float64)))))


def ipr_check(seeds):
    n, shape = CHAPTER["steps"], CHAPTER["shape"]
    print(f"\n(ipr) mean IPR over the {K} fields ({shape} torus) after {n} steps (t = {n * LR:g})")
    out = {"chapter": [], "initial": []}
    for s in range(seeds):
        tr = run_training(CHAPTER["batch"], n, seed=s, shape=shape)
        w = fields(tr)  # (C, K, N)
        out["initial"].append(mean_ipr(w[0]))
        out["chapter"].append(mean_ipr(w[-1]))
        print(f"  seed {s}: batch {CHAPTER['batch']}: {out['chapter'][-1]:.4f} (initial {out['initial'][-1]:.4f})")
    return out


# ------------------------------------------------------------------------------------------------
def paper_sampler(repo, batches):
    """The paper's sampler, timed in a separate process (``benchmarks/fig1_2d_paper.py``)."""
    import subprocess
    import sys

    here = os.path.dirname(os.path.abspath(__file__))
    cmd = [sys.executable, os.path.join(here, "fig1_2d_paper.py"), repo, str(batches)]
    env = {k: v for k, v in os.environ.items() if k != "JAX_ENABLE_X64"}
    out = subprocess.run(cmd, capture_output=True, text=True, check=True, cwd=repo, env=env).stdout
    r = json.loads(out.strip().splitlines()[-1])
    w = r["wall"]
    print(
        f"\n(paper) the paper's NLGP sampler, batch {r['batch']}: wall {w[0]:.2f} / {w[1]:.2f} / {w[2]:.2f} s per "
        f"batch, cpu {r['cpu']:.2f} s (construction {r['construct']:.1f} s)",
        flush=True,
    )
    return r


def section_note(sec):
    cores = sec.get("cores", os.cpu_count())
    pinned = f"; pinned to {cores} core{'s' if cores > 1 else ''}" if cores < os.cpu_count() else ""
    return f"({sec['runs']} runs; load average {sec['load'][0]} before, {sec['load'][1]} after{pinned})"


def write_results(res, directory):
    """DIR/fig1_2d.json (merged with the sections of earlier ``--only`` runs) and the table DIR/fig1_2d.md."""
    path = os.path.join(directory, "fig1_2d.json")
    if os.path.exists(path):
        with open(path) as f:
            old = json.load(f)
        res = {**old, **res}
    os.makedirs(directory, exist_ok=True)
    with open(path, "w") as f:
        json.dump(res, f, indent=1)
        f.write("\n")
    info = res["info"]
    lines = [
        f"Measured {info['date']} with `benchmarks/fig1_2d.py --write`: {info['cpus']} CPUs ({info['cpu']}), "
        f"jax {info['jax']}, float32, under `nice -n 19` on a machine shared with other jobs (load averages "
        "per table): wall times are upper bounds for an idle machine; CPU times (of this process, all threads) "
        "are the work, and an idle machine runs them in about CPU / 1.9 of wall time. NLGP(g = 100), 30 x 30 "
        'grid, xi = (1, 2), committee K = 20, ReLU, lr 3.0, `prng="splitmix"`.',
        "",
    ]
    if "split" in res:
        sec = res["split"]
        comp = components(sec["rows"])
        tot, c0 = sec["rows"]["sample"], sec["rows"]["carry"]
        lines += [
            f"One step at batch {FULL['batch']}, taken apart: ms per step, differences of cumulative pipelines "
            f"{section_note(sec)}"
            + (". At this load only the CPU column means anything." if sec["load"][0] > os.cpu_count() else "."),
            "",
            "| stage | wall (median) | CPU |",
            "| --- | ---: | ---: |",
        ]
        lines += [f"| {name} | {w:.1f} | {c:.1f} |" for name, (w, c) in comp.items()]
        lines += [
            f"| *sampling, total* | {tot['wall'][1] - c0['wall'][1]:.1f} | {tot['cpu'] - c0['cpu']:.1f} |",
            "",
        ]
    if "train" in res:
        t = res["train"]
        s, c, ext = t["full_step"], t["chapter"], t["full_extrapolated"]
        lines += [
            f"`train_online` {section_note(t)}:",
            "",
            "| run | min | median | max | CPU (min) |",
            "| --- | ---: | ---: | ---: | ---: |",
            f"| full batch, ms per step ({t['probe_steps']} steps per run) | "
            + " | ".join(f"{v:.1f}" for v in s["wall"])
            + f" | {s['cpu']:.1f} |",
            f"| full scale, {FULL['steps']} steps (extrapolated), minutes | "
            + " | ".join(f"{v / 60:.1f}" for v in ext)
            + f" | {s['cpu'] * FULL['steps'] / 6e4:.1f} |",
            f"| chapter scale ({CHAPTER['shape'][0]} x {CHAPTER['shape'][1]}, batch {CHAPTER['batch']}, "
            f"{CHAPTER['steps']} steps), seconds | "
            + " | ".join(f"{v:.1f}" for v in c["wall"])
            + f" | {c['cpu']:.1f} |",
            "",
            f"Chapter scale including compilation (first call): {t['chapter_first_call']:.1f} s.",
            "",
        ]
    if "ipr" in res:
        r = res["ipr"]
        ch = np.array(r["chapter"])
        sites = int(np.prod(CHAPTER["shape"]))
        lines += [
            f"Mean IPR of the {K} learned fields at chapter scale ({CHAPTER['steps']} steps), {len(ch)} seeds: "
            f"{ch.min():.4f} to {ch.max():.4f}; at initialisation {np.mean(r['initial']):.4f} (a delocalised "
            f"Gaussian field: about 3/{sites} = {3 / sites:.4f}).",
            "",
        ]
    if "paper" in res:
        r = res["paper"]
        w = r["wall"]
        lines += [
            f"The paper's own sampler (`NonlinearGPDataset`, dim = 2, run by `benchmarks/fig1_2d_paper.py`) needs "
            f"{w[0]:.2f} / {w[1]:.2f} / {w[2]:.2f} s (wall, min / median / max) and {r['cpu']:.2f} s of CPU per "
            f"batch of {r['batch']}, before any training {section_note(r)}.",
            "",
        ]
    with open(os.path.join(directory, "fig1_2d.md"), "w") as f:
        f.write("\n".join(lines))


def main():
    p = argparse.ArgumentParser(description=__doc__, formatter_class=argparse.RawDescriptionHelpFormatter)
    p.add_argument("--only", choices=["split", "train", "ipr", "paper"], default=None)
    p.add_argument("--runs", type=int, default=5)
    p.add_argument("--split-steps", type=int, default=20, help="steps per timed scan in the cost split")
    p.add_argument("--probe-steps", type=int, default=200, help="full-batch train_online steps per timed run")
    p.add_argument("--ipr-seeds", type=int, default=3)
    p.add_argument("--write", metavar="DIR", help="also write DIR/fig1_2d.md")
    p.add_argument("--paper", metavar="REPO", help="also time the paper's sampler from a checkout of its repository")
    args = p.parse_args()
    res = {
        "info": {
            "jax": jax.__version__,
            "cpus": os.cpu_count(),
            "cpu": cpu_model(),
            "date": time.strftime("%Y-%m-%d"),
        }
    }
    print(f"jax {jax.__version__}, {os.cpu_count()} cpus ({res['info']['cpu']}), load {os.getloadavg()[0]:.2f}")
    sections = {
        "split": lambda: {"rows": cost_split(args.runs, args.split_steps)},
        "train": lambda: training_costs(args.runs, args.probe_steps),
        "ipr": lambda: ipr_check(args.ipr_seeds),
        "paper": lambda: paper_sampler(args.paper, args.runs),
    }
    cores = len(os.sched_getaffinity(0)) if hasattr(os, "sched_getaffinity") else os.cpu_count()
    for name, run in sections.items():
        if args.only not in (None, name) or (name == "paper" and not args.paper):
            continue
        before = round(os.getloadavg()[0], 2)
        res[name] = {**run(), "runs": args.runs, "load": [before, round(os.getloadavg()[0], 2)], "cores": cores}
        if name == "split":
            for stage, (w, c) in components(res["split"]["rows"]).items():
                print(f"  -> {stage:34s} {w:7.1f} ms wall (median), {c:7.1f} ms cpu")
    print(f"\nload average at the end: {os.getloadavg()[0]:.2f}")
    if args.write:
        write_results(res, args.write)


if __name__ == "__main__":
    main()
