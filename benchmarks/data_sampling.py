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
larger size of the list). ``--write DIR`` also writes DIR/sampling_methods.md (the table the
reproducibility page includes) and DIR/sampling_methods.png (its curve). Findings: on a ring the
medians cross between N = 256 and 512 on a quiet machine (dense/FFT cost ratio 0.70 at 256, 1.17 at
512, 4.6 at 4096, where a dense batch takes ~0.23 s in float32, an FFT batch ~0.05 s); under
load the ratio at 256 was 0.97-1.46. On grids the dense path multiplies per axis (O(N sum L_a)) and is
faster than the FFT up to 64x64. Hence ``spectral.FFT_MIN_LENGTH = 257`` (per axis).
"""

import argparse
import math
import os
import platform
import time

import jax
import jax.numpy as jnp
import numpy as np

import localization
from localization import data

localization.enable_float64()  # float64 for the library (SplitMix64 bits, float64 sampling)

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
    """Print (and return) the cost per batch of both maps to the sites on every ring and grid size."""
    info = {
        "jax": jax.__version__,
        "cpus": os.cpu_count(),
        "cpu": cpu_model(),
        "load_before": round(os.getloadavg()[0], 2),
        "dtype": DTYPE.__name__,
        "runs": runs,
        "batch": METHOD_BATCH,
        "date": time.strftime("%Y-%m-%d"),
    }
    print(f"jax {info['jax']}, {info['cpus']} cpus ({info['cpu']}), load {info['load_before']}, {info['dtype']}")
    print(f"ms per batch of {METHOD_BATCH} samples of data.Gaussian(3): min / median / max over {runs} runs")
    model = data.Gaussian(3.0)
    results = {"info": info, "ring": [], "grid": []}
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
            results[title].append(
                {"size": rows[-1][0], "N": N}
                | {
                    m: [1e3 * float(f(t)) for f in (np.min, np.median, np.max)]
                    for m, t in [("draw", draw), *cost.items()]
                }
            )
            print(
                f"{rows[-1][0]:>9s} {N:6d} {fmt(draw):>22s}  {fmt(cost['dense']):>24s}  {fmt(cost['fft']):>24s}"
                f" {med['dense'] / med['fft']:9.2f}",
                flush=True,
            )
        results[f"crossover_{title}"] = crossover(rows)
        print(f"  crossover ({title}, medians): FFT faster from {crossover(rows)} on")
    info["load_after"] = round(os.getloadavg()[0], 2)
    print(f"load average at the end: {info['load_after']}")
    return results


def cpu_model():
    """The CPU's model name (Linux), else the platform's processor string."""
    try:
        with open("/proc/cpuinfo") as f:
            for line in f:
                if line.startswith("model name"):
                    return line.split(":", 1)[1].strip()
    except OSError:
        pass
    return platform.processor() or "unknown CPU"


def write_results(results, directory):
    """``sampling_methods.md`` (a table the reproducibility page includes) and ``sampling_methods.png``."""

    def faster(size, what):
        return f"at no {what.split()[0]} size measured" if size is None else f"from the {what} {size} on"

    info = results["info"]
    lines = [
        f"Measured {info['date']} with `benchmarks/data_sampling.py --methods --write`: {info['cpus']} CPUs"
        f" ({info['cpu']}), jax {info['jax']}, {info['dtype']}, batches of {info['batch']} samples of"
        f" `data.Gaussian(3)`, {info['runs']} timed runs (load average {info['load_before']} before,"
        f" {info['load_after']} after). Milliseconds per batch, min / median / max; *draw* is the normals"
        f" times the amplitudes alone. The FFT is faster {faster(results['crossover_ring'], 'ring of N =')}"
        f" and {faster(results['crossover_grid'], 'grid')}.",
        "",
        "| input | N | draw | dense | FFT | dense / FFT |",
        "| --- | ---: | ---: | ---: | ---: | ---: |",
    ]
    for title in ("ring", "grid"):
        for r in results[title]:
            cells = [" / ".join(f"{v:.3g}" for v in r[m]) for m in ("draw", "dense", "fft")]
            ratio = r["dense"][1] / r["fft"][1]
            lines.append(f"| {title} {r['size']} | {r['N']} | " + " | ".join(cells) + f" | {ratio:.2f} |")
    os.makedirs(directory, exist_ok=True)
    with open(os.path.join(directory, "sampling_methods.md"), "w") as f:
        f.write("\n".join(lines) + "\n")

    draw_results(results, directory)


def results_from_table(path):
    """The results ``write_results`` wrote as ``sampling_methods.md``, read back from its table.

    Values have the table's three significant digits (the figure is drawn from them: indistinguishable
    on its log axes). Only what :func:`draw_results` needs: per input, the size and min/median/max of
    each method.
    """
    results = {"ring": [], "grid": []}
    with open(path) as f:
        for line in f:
            cells = [c.strip() for c in line.strip().strip("|").split("|")]
            if len(cells) != 6 or not cells[0].startswith(("ring ", "grid ")):
                continue
            title, size = cells[0].split(" ", 1)
            row = {"size": size, "N": int(cells[1])}
            for m, cell in zip(("draw", "dense", "fft"), cells[2:5], strict=True):
                row[m] = [float(v) for v in cell.split(" / ")]
            results[title].append(row)
    return results


def draw_results(results, directory):
    """``DIR/sampling_methods.png``: the costs against N, drawn at twice the book's dpi (crisp at 1x CSS size)."""
    import matplotlib

    matplotlib.use("Agg")
    import matplotlib.pyplot as plt

    from localization import plotting

    plotting.use_book_style()
    fig, axes = plt.subplots(1, 2, figsize=(plotting.COLUMN_WIDTH, 3.0), layout="constrained")
    for ax, title in zip(axes, ("ring", "grid"), strict=True):
        N = np.array([r["N"] for r in results[title]])
        for j, (m, label) in enumerate((("dense", "dense basis"), ("fft", "inverse real FFT"), ("draw", "draw only"))):
            lo, med, hi = (np.array([r[m][i] for r in results[title]]) for i in range(3))
            style = ":" if m == "draw" else "o-"
            ax.errorbar(N, med, yerr=(med - lo, hi - med), fmt=style, ms=3, lw=1, color=f"C{j}", label=label)
        ax.set(xscale="log", yscale="log", xlabel="N (sites)", title=f"{title}s")
    axes[0].set_ylabel("ms per batch")
    axes[0].legend()
    fig.savefig(os.path.join(directory, "sampling_methods.png"), dpi=2 * plotting.FIGURE_DPI)
    plt.close(fig)


DTYPE = jnp.float32

if __name__ == "__main__":
    parser = argparse.ArgumentParser(description=__doc__, formatter_class=argparse.RawDescriptionHelpFormatter)
    parser.add_argument("--methods", action="store_true", help="only the dense vs FFT comparison")
    parser.add_argument("--runs", type=int, default=5, help="--methods: timed runs per size and method (>= 5)")
    parser.add_argument("--dtype", choices=["float32", "float64"], default="float32")
    parser.add_argument("--write", metavar="DIR", help="--methods: also write DIR/sampling_methods.{md,png}")
    parser.add_argument(
        "--redraw", metavar="DIR", help="only redraw DIR/sampling_methods.png from DIR/sampling_methods.md"
    )
    args = parser.parse_args()
    DTYPE = getattr(jnp, args.dtype)
    if args.redraw:
        draw_results(results_from_table(os.path.join(args.redraw, "sampling_methods.md")), args.redraw)
        raise SystemExit
    if args.methods:
        results = method_costs(max(args.runs, 5))
        if args.write:
            write_results(results, args.write)
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
