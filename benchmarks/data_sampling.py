"""Throughput of the data samplers (not a test; run by hand: .venv/bin/python benchmarks/data_sampling.py).

    nice -n 19 .venv/bin/python benchmarks/data_sampling.py --methods   # dense vs FFT map, crossover

Measures normals/s of jax.random.normal for the key implementations, and samples/s of the data
models in float32 at the training shape (batch 10 000 x n = 40), inside a jitted lax.scan.

Findings (2-core CPU shared with other jobs, load 10-13, so absolute numbers are pessimistic):
threefry2x32 is the fastest key implementation on CPU (jax.random.normal f32: ~23-80 M/s);
rbg / unsafe_rbg lower to XLA's RngBitGenerator, 2-5x *slower* on CPU. The NLGP length-scale task
(batch 10 000 x n = 40, f32, threefry) costs ~14 ms per step under that load, dominated by the
random bits; LengthscaleTask draws one normal matrix for both classes of a Gaussian-copula family.

``--methods``: cost of one batch of 1000 latent-Gaussian samples (``data.Gaussian(3).sample``) with
each map to the sites (``method="dense"``: products with the real Fourier basis, per axis on grids;
``method="fft"``: one inverse real FFT per axis), for rings N = 40 .. 4096 and grids 8x8 .. 64x64;
also the cost of the draw alone (normals times amplitudes, no map). Jitted once per size and method
(the number of batches per run is a traced loop bound, set so a run lasts ~0.2 s); min/median/max
over ``--runs`` runs; prints the crossover (smallest size from which the FFT is faster at every
larger size of the list). Findings (load average 4.5-8 on the 2 cores, so noisy): on a ring the
medians cross between N = 128 and 256 (FFT/dense cost 1.0-1.4 at 128, 0.7 at 256, 0.19 at 4096,
where the dense product alone takes ~0.7 s of float32 per batch, the FFT ~0.03 s); on grids the
dense path multiplies per axis (O(N sum L_a), 8x from 32x32 to 64x64) and is faster than the FFT up to
32x32, even at 64x64. Hence ``spectral.FFT_MIN_LENGTH = 129`` (per axis).
"""

import argparse
import math
import os
import time

import jax
import jax.numpy as jnp
import numpy as np

import localization  # noqa: F401
from localization import data

BATCH, N, STEPS = 10_000, 40, 100


def bench(fn, key):
    f = jax.jit(fn)
    jax.block_until_ready(f(key))  # compile
    t = time.perf_counter()
    jax.block_until_ready(f(key))
    return time.perf_counter() - t


def scan_of(sample):
    def run(key):
        def body(c, k):
            x = sample(k)
            return c + jnp.sum(x), None

        keys = jax.random.split(key, STEPS)
        return jax.lax.scan(body, jnp.zeros((), jnp.float32), keys)[0]

    return run


METHOD_BATCH = 1000
RINGS = (40, 64, 128, 256, 512, 1024, 2048, 4096)
GRIDS = ((8, 8), (16, 16), (30, 30), (32, 32), (64, 64))


def batch_costs(sample, shape, runs, target=0.2):
    """Seconds per batch of ``sample(key) -> (METHOD_BATCH, N)``: ``runs`` timings of one jitted loop."""
    N = math.prod(shape)

    @jax.jit
    def loop(key, batches):
        def body(t, c):
            return c + sample(jax.random.fold_in(key, t))

        return jax.lax.fori_loop(0, batches, body, jnp.zeros((METHOD_BATCH, N), DTYPE))

    key = jax.random.key(0)
    jax.block_until_ready(loop(key, 1))  # compile (once: the loop bound is traced)
    t = time.perf_counter()
    jax.block_until_ready(loop(key, 2))
    batches = max(2, min(2000, int(target / max(time.perf_counter() - t, 1e-6) * 2)))
    out = []
    for _ in range(runs):
        t = time.perf_counter()
        jax.block_until_ready(loop(key, batches))
        out.append((time.perf_counter() - t) / batches)
    return np.array(out)


def crossover(rows):
    """First size from which the FFT median is below the dense median at every larger size (or None)."""
    fast = [fft_t < dense_t for _, _, dense_t, fft_t in rows]
    for i in range(len(rows)):
        if all(fast[i:]):
            return rows[i][0]
    return None


def method_costs(runs):
    print(f"jax {jax.__version__}, {os.cpu_count()} cpus, load average {os.getloadavg()[0]:.2f}, {DTYPE.__name__}")
    print(f"ms per batch of {METHOD_BATCH} samples of data.Gaussian(3): min / median / max over {runs} runs")
    model = data.Gaussian(3.0)
    for title, sizes in (("ring", [(n,) for n in RINGS]), ("grid", list(GRIDS))):
        rows = []
        print(f"{title:>9s} {'N':>6s} {'draw only':>22s} {'dense':>26s} {'fft':>26s} {'dense/fft':>9s}")
        for shape in sizes:
            n = shape[0] if len(shape) == 1 else shape
            amps = jnp.asarray(data.spectral.grid_amplitudes(3.0, shape), DTYPE)
            N = math.prod(shape)
            draw = batch_costs(
                lambda k, N=N, a=amps: data.spectral.standard_normals(k, (METHOD_BATCH, N), DTYPE) * a, shape, runs
            )
            cost = {}
            for method in ("dense", "fft"):
                cost[method] = batch_costs(
                    lambda k, n=n, m=method: model.sample(k, METHOD_BATCH, n, DTYPE, method=m), shape, runs
                )

            def fmt(t):
                return f"{1e3 * t.min():7.3f} {1e3 * np.median(t):7.3f} {1e3 * t.max():7.3f}"

            med = {m: float(np.median(t)) for m, t in cost.items()}
            rows.append(("x".join(map(str, shape)), N, med["dense"], med["fft"]))
            print(
                f"{rows[-1][0]:>9s} {N:6d} {fmt(draw):>22s}  {fmt(cost['dense']):>24s}  {fmt(cost['fft']):>24s}"
                f" {med['dense'] / med['fft']:9.2f}",
                flush=True,
            )
        print(f"  crossover ({title}, medians): FFT faster from {crossover(rows)} on")
    print(f"load average at the end: {os.getloadavg()[0]:.2f}")


DTYPE = jnp.float32

if __name__ == "__main__":
    parser = argparse.ArgumentParser(description=__doc__, formatter_class=argparse.RawDescriptionHelpFormatter)
    parser.add_argument("--methods", action="store_true", help="only the dense vs FFT comparison")
    parser.add_argument("--runs", type=int, default=5, help="--methods: timed runs per size and method (>= 5)")
    parser.add_argument("--dtype", choices=["float32", "float64"], default="float32")
    args = parser.parse_args()
    DTYPE = getattr(jnp, args.dtype)
    if args.methods:
        method_costs(max(args.runs, 5))
        raise SystemExit
    for impl in ["threefry2x32", "rbg", "unsafe_rbg"]:
        key = jax.random.key(0, impl=impl)
        dt = bench(scan_of(lambda k: jax.random.normal(k, (BATCH, N), jnp.float32)), key)
        print(f"normal f32 {impl:13s}: {STEPS * BATCH * N / dt / 1e6:8.1f} M normals/s")
        dt = bench(scan_of(lambda k: jax.random.bits(k, (BATCH, N), jnp.uint32).astype(jnp.float32)), key)
        print(f"bits   u32 {impl:13s}: {STEPS * BATCH * N / dt / 1e6:8.1f} M words/s")
    models = {
        "Gaussian": data.Gaussian(3.0),
        "NLGP": data.NLGP(3.0, 100.0),
        "Kur": data.Kur(3.0, 5.0),
        "Ising": data.Ising(0.7),
        "StudentT": data.StudentT(3.0, 3.0),
        "EllipseSurface": data.EllipseSurface(3.0),
    }
    for impl in ["threefry2x32", "unsafe_rbg"]:
        key = jax.random.key(0, impl=impl)
        for name, m in models.items():
            dt = bench(scan_of(lambda k, m=m: m.sample(k, BATCH, N, jnp.float32)), key)
            print(
                f"{name:15s} {impl:13s}: {STEPS * BATCH / dt / 1e6:7.2f} M samples/s "
                f"({dt / STEPS * 1e3:6.2f} ms per batch of {BATCH})"
            )
        task = data.LengthscaleTask.of(data.NLGP, xi=(1.0, 3.0), gain=100.0)
        dt = bench(scan_of(lambda k, task=task: task.sample(k, BATCH, N, jnp.float32)[0]), key)
        print(
            f"{'task NLGP':15s} {impl:13s}: {STEPS * BATCH / dt / 1e6:7.2f} M samples/s "
            f"({dt / STEPS * 1e3:6.2f} ms per batch)"
        )
