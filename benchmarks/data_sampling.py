"""Throughput of the data samplers (not a test; run by hand: .venv/bin/python benchmarks/data_sampling.py).

Measures normals/s of jax.random.normal for the key implementations, and samples/s of the data
models in float32 at the training shape (batch 10 000 x n = 40), inside a jitted lax.scan.

Findings (2-core CPU shared with other jobs, load 10-13, so absolute numbers are pessimistic):
threefry2x32 is the fastest key implementation on CPU (jax.random.normal f32: ~23-80 M/s);
rbg / unsafe_rbg lower to XLA's RngBitGenerator, 2-5x *slower* on CPU. The NLGP length-scale task
(batch 10 000 x n = 40, f32, threefry) costs ~14 ms per step under that load, dominated by the
random bits; LengthscaleTask draws one normal matrix for both classes of a Gaussian-copula family.
"""

import time

import jax
import jax.numpy as jnp

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


if __name__ == "__main__":
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
