"""Training benchmarks (not a test; run by hand, sparingly — the machine's cores are shared):

    .venv/bin/python benchmarks/bench.py                 # (a) Fig. 3 training, (b) Ising sampler, (c) Fig. 5 sweep
    .venv/bin/python benchmarks/bench.py --only a        # one section
    .venv/bin/python benchmarks/bench.py --only a --repeat 5   # (a) five compile-included runs: min/median/max
    .venv/bin/python benchmarks/bench.py --investigate   # per-step cost breakdown (key impls, erf, matmul)
    .venv/bin/python benchmarks/bench.py --only c --fig5-steps 6000 --fig5-record book/data/fig5_paper_scale.json
                                                         # (c), and record its results for the simulation chapter

(a) Paper Fig. 3 configuration: NLGP(g = 100), L = 40, xi = (1, 3), online SGD with a fresh batch of
    10 000 per step, lr 0.05, 2000 steps; wall time *including compilation* for 1 and for 30
    initialisations (the same data stream), examples×steps per second, and the training FLOPs as
    a fraction of this machine's float32 matmul rate measured in the same run.
(b) Exact Ising sampler (transfer matrices), samples/s at N = 40.
(c) Paper Fig. 5 at paper scale: ``experiments.fig5`` with ``experiments.PAPER_FIG5`` (NLGP gains
    logspace(-1, 1, 10) and Kur k in the paper's list, xi = (0.3, 0.7), K = 1, lr 0.1, batch 5000,
    30 initialisations) except the number of steps; IPR at checkpoints, the number of steps after
    which the mean IPR has settled, and the wall time. With ``--fig5-record PATH`` the
    results (final mean IPR and exact excess kurtosis per value, settling step per family, settings)
    are also written to a JSON file; the simulation chapter reads ``book/data/fig5_paper_scale.json``.

Wall times are for this 2-core machine *while other people's jobs run on it*; the CPU time of this
process (``cpu``) is printed beside the wall time as a load indicator (XLA spreads the large
element-wise loops over both cores, so cpu/wall is about 1.8 on an idle machine; lower means we were
waiting for a core).
"""

from __future__ import annotations

import argparse
import dataclasses
import json
import math
import os
import shlex
import sys
import time

import jax
import jax.numpy as jnp
import numpy as np

import localization
from localization import data, experiments, initialisation, train
from localization.prng import splitmix_key

localization.enable_float64()  # float64 for the library (SplitMix64 bits, float64 sampling)


def _timed(fn):
    w0, c0 = time.perf_counter(), time.process_time()
    out = fn()
    jax.block_until_ready(out)
    return out, time.perf_counter() - w0, time.process_time() - c0


def matmul_gflops(size: int = 2048, reps: int = 5) -> float:
    a = jax.random.normal(jax.random.key(0), (size, size), jnp.float32)
    f = jax.jit(lambda a: a @ a)
    jax.block_until_ready(f(a))
    best = np.inf
    for _ in range(reps):
        _, dt, _ = _timed(lambda: f(a))
        best = min(best, dt)
    return 2 * size**3 / best / 1e9


def section_a(peak: float, variants, repeat: int = 1):
    print("\n(a) Fig. 3 configuration: NLGP g=100, L=40, xi=(1,3), batch 10000, lr 0.05, 2000 steps")
    L, B, S, lr = 40, 10_000, 2000, 0.05
    task = data.LengthscaleTask.of(data.NLGP, xi=(1.0, 3.0), gain=100.0)
    w0 = initialisation.init_weights(jax.random.key(1), L, 0.001, num=30)
    # FLOPs per step: model forward x@w (2BN per init) and backward x^T r (2BN per init); the data
    # sampler maps the scaled normals to the sites with one product by the Fourier basis (2 B N^2).
    for prng, balanced in variants:
        sample_flops = 2 * B * L * L
        for I in (1, 30):
            w = w0[0] if I == 1 else w0

            def run(w=w, prng=prng, balanced=balanced):
                return train.train_online(
                    jax.random.key(0), task, w, lr=lr, batch=B, steps=S, checkpoints=21, prng=prng, balanced=balanced
                ).weights

            firsts = []
            for _ in range(repeat):  # each repetition compiles again (caches cleared)
                jax.clear_caches()
                _, wall, cpu = _timed(run)
                firsts.append(wall)
            _, wall2, cpu2 = _timed(run)  # cached executable: pure run time
            if repeat > 1:
                print(
                    f"  inits={I:2d}: {repeat} runs incl. compile: min {min(firsts):.2f} s, median "
                    f"{float(np.median(firsts)):.2f} s, max {max(firsts):.2f} s"
                )
            model_flops = 4 * B * L * I * S
            total = model_flops + sample_flops * S
            print(
                f"  prng={prng:8s} balanced={str(balanced):5s} inits={I:2d}: wall {wall:6.2f} s incl. compile "
                f"(cpu {cpu:5.2f} s); rerun {wall2:5.2f} s (cpu {cpu2:5.2f}); "
                f"{B * S / wall2 / 1e6:5.2f} M examples*steps/s; "
                f"model FLOPs {model_flops / wall2 / 1e9:5.2f} GFLOP/s = "
                f"{100 * model_flops / wall2 / 1e9 / peak:4.1f} % "
                f"of matmul peak (incl. sampling matmuls {100 * total / wall2 / 1e9 / peak:4.1f} %)",
                flush=True,
            )


def section_b():
    print("\n(b) exact Ising sampler (transfer matrices), N = 40")
    num, reps = 10_000, 20
    for J in (0.3, 0.7):
        m = data.Ising(J)
        for prng in ("splitmix", "key"):
            key = jax.random.key(0)
            key = splitmix_key(key) if prng == "splitmix" else key

            @jax.jit
            def many(key, m=m):
                def body(c, t):
                    return c + jnp.sum(m.sample(jax.random.fold_in(key, t), num, 40, jnp.float32)), None

                return jax.lax.scan(body, jnp.zeros((), jnp.float32), jnp.arange(reps))[0]

            jax.block_until_ready(many(key))
            _, wall, cpu = _timed(lambda key=key: many(key))
            print(f"  J={J}: prng={prng:8s} {num * reps / wall / 1e6:6.2f} M samples/s (cpu {cpu / wall:4.2f} of wall)")


FIG5_KEY = 4  # jax.random.key(FIG5_KEY) for section (c)


def section_c(steps: int, every: int, tol: float, record: str | None = None):
    """``experiments.fig5`` with the paper's settings (``PAPER_FIG5``) except the number of steps."""
    if steps % every:
        raise SystemExit(f"--fig5-steps ({steps}) must be a multiple of --fig5-every ({every})")
    settings = experiments.PAPER_FIG5.replace(steps=steps, checkpoints=steps // every + 1)
    print(
        f"\n(c) Fig. 5 at paper scale: experiments.fig5 with PAPER_FIG5, {steps} steps: 2 families x 10 values x "
        f"{settings.inits} inits, K=1, lr {settings.lr}, batch {settings.batch}, balanced={settings.balanced}"
    )
    jax.clear_caches()
    result, wall, cpu = _timed(lambda: experiments.fig5(jax.random.key(FIG5_KEY), settings))
    print(f"  wall {wall:6.1f} s incl. compile for both families (cpu {cpu:6.1f} s)")
    ck = np.asarray(result.nlgp.steps)
    families = {}
    for name, sweep in (("NLGP", result.nlgp), ("Kur", result.kur)):
        mean = sweep.ipr.mean(axis=1)  # (values, C)
        dev = np.abs(mean - mean[:, -1:]).max(axis=0)  # (C,)
        settled = next(int(ck[i]) for i in range(ck.size) if np.all(dev[i:] < tol))
        print(f"  {name}: mean IPR settled (within {tol}) by step {settled}")
        print("    final mean IPR per value:", np.array2string(sweep.mean, precision=3))
        print("    std over inits (max over values):", f"{sweep.std.max():.3g}")
        print("    max over values of |mean IPR(step) - final| at steps", ck.tolist())
        print("     ", np.array2string(dev, precision=3))
        families[name] = {
            "parameter": "gain g" if name == "NLGP" else "exponent k",
            "values": [float(p) for p in sweep.params],
            "excess_kurtosis": [float(e) if math.isfinite(e) else None for e in sweep.excess_kurtosis],  # exact
            "final_mean_ipr": [float(m) for m in sweep.mean],
            "final_std_ipr": [float(sd) for sd in sweep.std],  # over inits
            "settled_step": settled,
        }
    if record is not None:
        st = dataclasses.asdict(settings)
        out = {
            "description": "benchmarks/bench.py section (c): experiments.fig5 (paper Fig. 5) at paper scale. "
            "final_mean_ipr: IPR at the last step, mean over the initialisations; settled_step: first checkpoint "
            "from which the mean IPR of every value of the family stays within tol of its final value.",
            "command": shlex.join([".venv/bin/python", "benchmarks/bench.py", *sys.argv[1:]]),
            "jax_version": jax.__version__,
            "wall_seconds": round(wall, 1),  # both families, compilation included
            "cpu_count": os.cpu_count(),
            "settings": {
                "n": st["n"],
                "xi": list(st["xi"]),
                "lr": st["lr"],
                "batch": st["batch"],
                "steps": steps,
                "inits": st["inits"],
                "final_step": int(ck[-1]),
                "init_scale": st["init_scale"],
                "balanced": st["balanced"],
                "checkpoint_every": every,
                "tol": tol,
                "key": FIG5_KEY,
            },
            "families": families,
        }
        os.makedirs(os.path.dirname(record) or ".", exist_ok=True)
        with open(record, "w", encoding="utf-8") as f:
            json.dump(out, f, indent=1, allow_nan=False)
            f.write("\n")
        print(f"  recorded to {record}")


def investigate():
    """Per-step costs of the pieces of one online-SGD step (batch 10 000 x 40, float32)."""
    print("\n(investigate) per-step costs at batch 10000 x 40, float32 (200-step scans; best of 3)")
    B, N, S = 10_000, 40, 200
    R = jnp.asarray(data.covariance_sqrt(3.0, N), jnp.float32)
    W = jnp.full((30, N), 0.01, jnp.float32)

    def run(name, f, key):
        # the result is added into a (B, N) carry, so it is materialised once per step (a scalar
        # reduction instead lets XLA fuse the generator into a slow reduction loop)
        @jax.jit
        def g(key):
            def body(c, t):
                out = f(jax.random.fold_in(key, t)).astype(jnp.float32)
                return c + out.reshape(c.shape[0], -1)[:, : c.shape[1]], None

            return jax.lax.scan(body, jnp.zeros((B, N), jnp.float32), jnp.arange(S))[0]

        jax.block_until_ready(g(key))
        best = min(_timed(lambda: g(key))[1:] for _ in range(3))
        print(f"  {name:44s} {best[0] / S * 1e3:6.3f} ms/step (cpu {best[1] / S * 1e3:6.3f})", flush=True)

    keys = {
        "threefry": jax.random.key(0),
        "rbg": jax.random.key(0, impl="rbg"),
        "unsafe_rbg": jax.random.key(0, impl="unsafe_rbg"),
        "splitmix": splitmix_key(jax.random.key(0)),
    }
    for name, k in keys.items():
        run(f"bits u32 [{name}]", lambda k: jax.random.bits(k, (B, N), jnp.uint32), k)
    for name, k in keys.items():
        run(f"normal f32 [{name}]", lambda k: jax.random.normal(k, (B, N), jnp.float32), k)
    k = keys["splitmix"]
    from localization import prng

    run("prng.normal f32 (one-angle Box-Muller) [splitmix]", lambda k: prng.normal(k, (B, N)), k)
    run("normal f64 [splitmix]", lambda k: jax.random.normal(k, (B, N), jnp.float64), k)
    run("uniform f32 [splitmix]", lambda k: jax.random.uniform(k, (B, N), jnp.float32), k)
    run("prng.normal @ R (one class)", lambda k: prng.normal(k, (B, N)) @ R, k)
    run("erf(100 * normal)", lambda k: jax.lax.erf(100 * jax.random.normal(k, (B, N), jnp.float32)), k)
    task = data.LengthscaleTask.of(data.NLGP, xi=(1.0, 3.0), gain=100.0)
    run("NLGP task.sample (per-class amplitudes, one product)", lambda k: task.sample(k, B, N, jnp.float32)[0], k)

    def grad(k, I):
        x = jax.random.normal(k, (B, N), jnp.float32)
        y = (x[:, 0] > 0).astype(jnp.float32)
        f = lambda w: jnp.mean((y - jax.nn.relu(x @ w)) ** 2)  # noqa: E731
        return jax.vmap(jax.grad(f))(W[:I])

    run("normal + MSE grad, 1 init", lambda k: jnp.broadcast_to(grad(k, 1).sum(), (B, N)), k)
    run("normal + MSE grad, 30 inits", lambda k: jnp.broadcast_to(grad(k, 30).sum(), (B, N)), k)


def main():
    p = argparse.ArgumentParser(description=__doc__, formatter_class=argparse.RawDescriptionHelpFormatter)
    p.add_argument("--only", choices=["a", "b", "c"], default=None)
    p.add_argument("--investigate", action="store_true")
    p.add_argument("--all-variants", action="store_true", help="(a) also with threefry bits and balanced labels")
    p.add_argument(
        "--repeat", type=int, default=1, help="(a) repeat each compile-included run and print min/median/max"
    )
    p.add_argument("--fig5-steps", type=int, default=2000)
    p.add_argument("--fig5-every", type=int, default=250)
    p.add_argument("--fig5-tol", type=float, default=0.02)
    p.add_argument(
        "--fig5-record",
        metavar="PATH",
        default=None,
        help="(c) also write its results (final mean IPR, exact excess kurtosis, settling step) to PATH as JSON",
    )
    args = p.parse_args()
    if args.fig5_record is not None and args.only not in (None, "c"):
        p.error("--fig5-record records section c: use it with --only c (or without --only)")
    print(f"jax {jax.__version__}, {os.cpu_count()} cpus, load average {os.getloadavg()[0]:.2f}")
    peak = matmul_gflops()
    print(f"float32 matmul (2048^2): {peak:.1f} GFLOP/s")
    if args.investigate:
        investigate()
    variants = [("splitmix", False)]
    if args.all_variants:
        variants += [("key", False), ("splitmix", True)]
    if args.only in (None, "a"):
        section_a(peak, variants, args.repeat)
    if args.only in (None, "b"):
        section_b()
    if args.only in (None, "c"):
        section_c(args.fig5_steps, args.fig5_every, args.fig5_tol, args.fig5_record)
    print(f"\nload average at the end: {os.getloadavg()[0]:.2f}")


if __name__ == "__main__":
    main()
