"""Throughput and per-job overhead of localization.jobs against the claims sweep's process pool
(not a test; run by hand: .venv/bin/python benchmarks/jobs_overhead.py [--write benchmarks/results]).

Two kinds of job: *trivial* (returns its argument) and *1 s* (sleeps one second: a job whose work
does not compete for the CPU, so that what is measured is the machinery, not the load of a shared
machine). Each is run as a batch with 1 and with 2 local workers by

* **dask**: :func:`localization.jobs.run_jobs` on a ``LocalCluster`` started beforehand (steady
  state: submission, the worker's version check, the result's round trip and its JSON file);
* **dask, cold**: ``run_jobs`` starting and closing its own cluster, as ``python -m localization
  claims`` would;
* **pool**: ``concurrent.futures.ProcessPoolExecutor`` with ``spawn`` processes, submit then
  ``as_completed``, as ``localization.book.claims_sweep._execute`` ran its chapters before it used
  the engine (warm: the pool's processes started beforehand; cold: started inside the timing).

Per batch: wall time, jobs per minute, and the overhead per job, (wall - ideal) / jobs with ideal
= jobs x duration / workers; the ratios dask / pool are of the same configuration, measured in the
same run. A chapter of the claims sweep takes 20-120 s, so overheads below ~0.1 s per job are
invisible there.
"""

from __future__ import annotations

import argparse
import multiprocessing
import os
import tempfile
import time
from concurrent.futures import ProcessPoolExecutor, as_completed
from pathlib import Path

from localization import jobs


def trivial(i: int) -> int:
    return i


def one_second(i: int) -> int:
    time.sleep(1.0)
    return i


KINDS = {"trivial": (trivial, 0.0, 200), "1 s": (one_second, 1.0, 8)}


def _batch(function, n: int) -> list[jobs.Job]:
    return [jobs.Job(f"job.{i}", function, {"i": i}, "benchmark", i) for i in range(n)]


def time_dask(function, n: int, workers: int, address: str | None) -> float:
    with tempfile.TemporaryDirectory() as store:
        start = time.perf_counter()
        jobs.run_jobs(_batch(function, n), store, scheduler=address, workers=workers, progress=False)
        return time.perf_counter() - start


def time_pool(function, n: int, workers: int, pool: ProcessPoolExecutor | None) -> float:
    start = time.perf_counter()
    own = pool is None
    if own:
        pool = ProcessPoolExecutor(max_workers=workers, mp_context=multiprocessing.get_context("spawn"))
    futures = [pool.submit(function, i) for i in range(n)]
    results = [f.result() for f in as_completed(futures)]
    if own:
        pool.shutdown()
    assert sorted(results) == list(range(n))
    return time.perf_counter() - start


def main() -> None:
    from data_sampling import cpu_model  # sibling benchmark; imported here, as it imports jax, which the
    from distributed import LocalCluster  # pool's spawned processes (importing this script) should not

    p = argparse.ArgumentParser()
    p.add_argument("--write", metavar="DIR", help="also write DIR/jobs_overhead.md")
    args = p.parse_args()
    load_before = os.getloadavg()[0]
    rows = []
    for workers in (1, 2):
        pool = ProcessPoolExecutor(max_workers=workers, mp_context=multiprocessing.get_context("spawn"))
        list(pool.map(trivial, range(4 * workers)))  # start the processes (warm)
        with LocalCluster(
            n_workers=workers, threads_per_worker=1, processes=True, memory_limit=0, dashboard_address=":0"
        ) as cluster:
            time_dask(trivial, 2 * workers, workers, cluster.scheduler_address)  # first import on the workers
            for kind, (function, seconds, n) in KINDS.items():
                ideal = n * seconds / workers
                timed = {
                    "dask": time_dask(function, n, workers, cluster.scheduler_address),
                    "pool": time_pool(function, n, workers, pool),
                }
                rows.append((kind, workers, n, ideal, timed))
                print(kind, workers, {k: round(v, 3) for k, v in timed.items()}, flush=True)
        pool.shutdown()
        for kind, (function, seconds, n) in KINDS.items():
            ideal = n * seconds / workers
            timed = {"dask": time_dask(function, n, workers, None), "pool": time_pool(function, n, workers, None)}
            rows.append((kind + ", cold", workers, n, ideal, timed))
            print(kind, "cold", workers, {k: round(v, 3) for k, v in timed.items()}, flush=True)
    load_after = os.getloadavg()[0]

    lines = [
        f"Measured {time.strftime('%Y-%m-%d')} with `benchmarks/jobs_overhead.py`: {os.cpu_count()} CPUs "
        f"({cpu_model()}), load average {load_before:.1f} before, {load_after:.1f} after (a shared machine: "
        "the trivial batches' numbers are upper bounds). *dask*: `localization.jobs.run_jobs` on a local "
        "cluster (warm: started before the timing; cold: started and closed by `run_jobs`); *pool*: the "
        "claims sweep's `ProcessPoolExecutor` of spawned processes (warm / cold likewise). Overhead per job: "
        "(wall - jobs x duration / workers) / jobs.",
        "",
        "| jobs | workers | batch | dask wall (s) | pool wall (s) | dask jobs/min | pool jobs/min "
        "| dask overhead/job (ms) | pool overhead/job (ms) | dask / pool overhead |",
        "| --- | ---: | ---: | ---: | ---: | ---: | ---: | ---: | ---: | ---: |",
    ]
    for kind, workers, n, ideal, timed in rows:
        rate = {k: 60 * n / v for k, v in timed.items()}
        over = {k: 1000 * (v - ideal) / n for k, v in timed.items()}
        ratio = over["dask"] / over["pool"] if over["pool"] > 0 else float("inf")
        lines.append(
            f"| {kind} | {workers} | {n} | {timed['dask']:.2f} | {timed['pool']:.2f} | {rate['dask']:.0f} "
            f"| {rate['pool']:.0f} | {over['dask']:.1f} | {over['pool']:.1f} | {ratio:.1f} |"
        )
    text = "\n".join(lines) + "\n"
    print(text)
    if args.write:
        Path(args.write, "jobs_overhead.md").write_text(text)


if __name__ == "__main__":
    main()
