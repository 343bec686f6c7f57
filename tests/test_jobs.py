"""localization.jobs: a batch of jobs on a Dask cluster gives the serial results, resumes, survives a
killed worker, and refuses what it must (an unreachable scheduler, a worker of another commit or
without the project, a job past its timeout).

The jobs are this module's functions, shipped to the workers by value (cloudpickle), so that workers
started as plain ``dask worker`` processes need not import the tests. Every cluster here is local
(loopback addresses only) and started by the test that uses it.
"""

import json
import os
import re
import shutil
import signal
import socket
import subprocess
import sys
import time
from pathlib import Path

import cloudpickle
import numpy as np
import pytest

from localization import jobs

ROOT = Path(__file__).resolve().parents[1]
cloudpickle.register_pickle_by_value(sys.modules[__name__])


def moments(seed: int, n: int) -> list[float]:
    """A deterministic job: the first two sample moments of n standard normals from a seed."""
    x = np.random.default_rng(seed).standard_normal(n)
    return [float(x.mean()), float(np.mean(x**2))]


def counted(log: str, name: str, seed: int) -> int:
    """A job that leaves a file per execution in ``log`` (to count how often each job ran)."""
    (Path(log) / f"{name}.{os.getpid()}.{time.monotonic_ns()}").touch()
    return seed * seed


def dies_once(marker: str, seed: int) -> list[float]:
    """On its first execution, kill the worker process running it (SIGKILL, mid-job); then compute."""
    if not os.path.exists(marker):
        Path(marker).write_text(str(os.getpid()))
        os.kill(os.getpid(), signal.SIGKILL)
    return moments(seed, 1000)


def sleeps(seconds: float) -> str:
    time.sleep(seconds)
    return "woke"


def raises(seed: int) -> None:
    raise ValueError(f"bad seed {seed}")


def not_json() -> float:
    return float("nan")


def _batch(n: int = 6) -> list[jobs.Job]:
    return [jobs.Job(f"moments.{s}", moments, {"seed": s, "n": 1000}, "source-a", s) for s in range(n)]


@pytest.fixture(scope="module")
def cluster():
    """A LocalCluster of two worker processes (one thread each), for the tests that share it."""
    from distributed import LocalCluster

    with LocalCluster(n_workers=2, threads_per_worker=1, processes=True, memory_limit=0, dashboard_address=":0") as c:
        yield c.scheduler_address


# -------------------------------------------------------------------------------------------------
# arguments (no cluster)
# -------------------------------------------------------------------------------------------------
@pytest.mark.parametrize(
    "fields, match",
    [
        (dict(name="a/b"), "name must be"),
        (dict(function="no colon"), "function must be"),
        (dict(function=3), "function must be"),
        (dict(kwargs={"x": float("nan")}), "must be JSON"),
        (dict(kwargs={"x": object()}), "must be JSON"),
        (dict(source=""), "source must be"),
        (dict(seed=-1), "seed must be"),
        (dict(seed=True), "seed must be"),
    ],
)
def test_job_refuses_bad_fields(fields, match):
    good = dict(name="a", function="math:sqrt", kwargs={"x": 1.0}, source="s", seed=0)
    with pytest.raises((ValueError, TypeError), match=match):
        jobs.Job(**{**good, **fields})


def test_run_jobs_refuses_bad_batches(tmp_path, monkeypatch):
    batch = _batch(2)
    with pytest.raises(ValueError, match="unique"):
        jobs.run_jobs([batch[0], batch[0]], tmp_path)
    with pytest.raises(TypeError, match=r"jobs\[1\] must be a Job"):
        jobs.run_jobs([batch[0], "x"], tmp_path)
    with pytest.raises(ValueError, match="timeout must be a positive"):
        jobs.run_jobs(batch, tmp_path, timeout=0)
    with pytest.raises(ValueError, match="workers must be"):
        jobs.run_jobs(batch, tmp_path, workers=0)
    monkeypatch.setenv(jobs.SCHEDULER_ENV, "not an address")
    with pytest.raises(ValueError, match=jobs.SCHEDULER_ENV):
        jobs.run_jobs(batch, tmp_path)


def test_a_stored_batch_runs_nothing_and_connects_to_nothing(tmp_path):
    """Every job stored under its identity: no scheduler is contacted (this one would be unreachable)."""
    commit = jobs.project_version().stamp
    expected = {}
    for job in _batch(3):
        expected[job.name] = moments(**job.kwargs)
        entry = dict(name=job.name, identity=job.identity(commit), result=expected[job.name])
        (tmp_path / f"{job.name}.json").write_text(json.dumps(entry))
    assert jobs.run_jobs(_batch(3), tmp_path, scheduler="tcp://127.0.0.1:9", progress=False) == expected


def test_stored_results_are_keyed_by_the_library_state_of_an_uncommitted_tree(tmp_path):
    """Two states of an edited tree share the commit "<hash>+uncommitted": the digest tells them apart."""
    clean = jobs.ProjectVersion("abc", "1" * 64, "here:/x")
    assert clean.stamp == "abc"
    edited, edited_again = (jobs.ProjectVersion("abc+uncommitted", d * 64, "here:/x") for d in "12")
    assert edited.stamp == "abc+uncommitted:" + "1" * 16 and edited.stamp != edited_again.stamp
    (job,) = _batch(1)
    entry = dict(name=job.name, identity=job.identity(edited.stamp), result=[0.0, 1.0])
    (tmp_path / f"{job.name}.json").write_text(json.dumps(entry))
    assert jobs.stored_result(tmp_path, job, edited.stamp)["result"] == [0.0, 1.0]
    assert jobs.stored_result(tmp_path, job, edited_again.stamp) is None  # the library changed: run again


def test_discard_removes_only_the_batch_results(tmp_path):
    batch = _batch(3)
    for job in batch:
        (tmp_path / f"{job.name}.json").write_text("{}")
    (tmp_path / "other.json").write_text("{}")
    assert jobs.discard(tmp_path, batch[:2]) == 2
    assert sorted(p.name for p in tmp_path.iterdir()) == ["moments.2.json", "other.json"]
    assert jobs.discard(tmp_path / "absent", batch) == 0
    with pytest.raises(TypeError, match="jobs must be a sequence of Job"):
        jobs.discard(tmp_path, ["moments.2"])


# -------------------------------------------------------------------------------------------------
# on a cluster
# -------------------------------------------------------------------------------------------------
@pytest.mark.slow
def test_same_results_as_a_serial_run(cluster, tmp_path):
    """Same code, same numpy, integer seeds: the results are equal exactly (tolerance 0)."""
    batch = _batch(6)
    serial = {job.name: moments(**job.kwargs) for job in batch}
    results = jobs.run_jobs(batch, tmp_path, scheduler=cluster, progress=False)
    assert list(results) == [job.name for job in batch] and results == serial
    stored = {p.stem: json.loads(p.read_text()) for p in tmp_path.iterdir()}
    assert set(stored) == set(serial)  # one file per job, no temporary file left
    commit = jobs.project_version().stamp
    for job in batch:
        entry = stored[job.name]
        assert entry["result"] == serial[job.name] and entry["identity"] == job.identity(commit)
        assert entry["kwargs"] == job.kwargs and entry["function"] == f"{__name__}:moments"
        assert entry["worker"].startswith("tcp://127.0.0.1:")


@pytest.mark.slow
def test_resume_runs_only_the_jobs_not_stored(cluster, tmp_path):
    """A batch stopped after two jobs: run again, only the other two run; a stale identity reruns."""
    log, store = tmp_path / "log", tmp_path / "store"
    log.mkdir()

    def batch(source_of_d="s"):
        sources = {"a": "s", "b": "s", "c": "s", "d": source_of_d}
        return [
            jobs.Job(name, counted, {"log": str(log), "name": name, "seed": i}, sources[name], i)
            for i, name in enumerate("abcd")
        ]

    jobs.run_jobs(batch()[:2], store, scheduler=cluster, progress=False)  # "interrupted" after a and b
    (store / ".c.json.1234.tmp").write_text("{half a fil")  # a write cut short: never renamed, ignored
    results = jobs.run_jobs(batch(), store, scheduler=cluster, progress=False)
    assert results == {"a": 0, "b": 1, "c": 4, "d": 9}
    ran = sorted(p.name.split(".")[0] for p in log.iterdir())
    assert ran == ["a", "b", "c", "d"]  # each exactly once over the two runs
    jobs.run_jobs(batch(source_of_d="changed"), store, scheduler=cluster, progress=False)
    ran = sorted(p.name.split(".")[0] for p in log.iterdir())
    assert ran == ["a", "b", "c", "d", "d"]  # only the job whose source changed ran again


@pytest.mark.slow
def test_a_worker_killed_mid_job_has_its_job_retried(tmp_path):
    """The engine's own local cluster (two workers): one job kills its worker on its first try; the
    scheduler runs it again elsewhere, and every result is stored once, equal to the serial one."""
    marker = tmp_path / "killed"
    batch = _batch(4) + [jobs.Job("victim", dies_once, {"marker": str(marker), "seed": 7}, "source-a", 7)]
    serial = {job.name: moments(**job.kwargs) for job in batch[:4]} | {"victim": moments(7, 1000)}
    store = tmp_path / "store"
    results = jobs.run_jobs(batch, store, workers=2, retries=1, progress=False)
    assert marker.exists()  # the worker was killed once
    assert results == serial
    assert sorted(p.name for p in store.iterdir()) == sorted(f"{name}.json" for name in serial)


@pytest.mark.slow
def test_a_job_past_its_timeout_fails_clearly_and_the_others_are_stored(cluster, tmp_path):
    batch = [
        jobs.Job("slow", sleeps, {"seconds": 60.0}, "s", 0),
        jobs.Job("fast", sleeps, {"seconds": 0.0}, "s", 1),
        jobs.Job("raises", raises, {"seed": 2}, "s", 2),
        jobs.Job("nan", not_json, {}, "s", 3),
    ]
    start = time.monotonic()
    with pytest.raises(jobs.JobFailedError) as caught:
        jobs.run_jobs(batch, tmp_path, scheduler=cluster, timeout=1.0, progress=False)
    assert time.monotonic() - start < 30  # not the 60 s of the slow job
    error = caught.value
    assert error.results == {"fast": "woke"} and (tmp_path / "fast.json").exists()
    assert set(error.failures) == {"slow", "raises", "nan"}
    assert "timed out: still running after 1 s on worker tcp://127.0.0.1:" in error.failures["slow"]
    assert error.failures["raises"] == "ValueError: bad seed 2"
    assert "must be JSON" in error.failures["nan"]
    assert "slow: timed out" in str(error) and not (tmp_path / "slow.json").exists()


@pytest.mark.slow
def test_a_worker_with_other_uncommitted_changes_is_refused(cluster, tmp_path, monkeypatch):
    """Same commit, another library digest, another checkout: the client's tree, elsewhere, has an edit
    its workers do not have (its version replaced in this process only; the workers compute theirs)."""
    real = jobs.project_version()
    edited = jobs.ProjectVersion(real.commit, "0" * 64, "elsewhere:/home/someone/localization")
    monkeypatch.setattr(jobs, "project_version", lambda paths=("localization",): edited)
    with pytest.raises(jobs.WorkerMismatchError, match="with other uncommitted changes than the client"):
        jobs.run_jobs(_batch(1), tmp_path, scheduler=cluster, progress=False)
    assert not any(tmp_path.iterdir())


def _free_port() -> int:
    with socket.socket() as s:
        s.bind(("127.0.0.1", 0))
        return s.getsockname()[1]


@pytest.mark.slow
def test_an_unreachable_scheduler_is_named(tmp_path, monkeypatch):
    address = f"tcp://127.0.0.1:{_free_port()}"  # nothing listens there
    monkeypatch.setenv(jobs.SCHEDULER_ENV, address)
    start = time.monotonic()
    with pytest.raises(ConnectionError, match=f"cannot reach the Dask scheduler at {address} within 1 s"):
        jobs.run_jobs(_batch(1), tmp_path, connect_timeout=1.0, progress=False)
    assert time.monotonic() - start < 10


@pytest.fixture
def lone_scheduler():
    """A scheduler without workers (in this process): each test connects its own ``dask worker``."""
    from distributed import LocalCluster

    with LocalCluster(n_workers=0, processes=True, dashboard_address=":0") as c:
        yield c.scheduler_address


def _start_worker(address: str, pythonpath: Path, cwd: Path) -> subprocess.Popen:
    """``dask worker ADDRESS`` in a process whose ``localization`` is the one under ``pythonpath``."""
    env = dict(os.environ, PYTHONPATH=str(pythonpath))  # before site-packages, hence before the editable install
    command = [sys.executable, "-m", "distributed.cli.dask_worker", address, "--nthreads", "1", "--no-nanny"]
    return subprocess.Popen(command, env=env, cwd=cwd, stdout=subprocess.DEVNULL, stderr=subprocess.DEVNULL)


def _run_against(address, worker, tmp_path):
    from distributed import Client

    try:
        with Client(address, timeout=10) as client:
            client.wait_for_workers(1, timeout=30)
        return jobs.run_jobs(_batch(1), tmp_path / "store", scheduler=address, progress=False)
    finally:
        worker.terminate()
        worker.wait(timeout=30)


@pytest.mark.slow
def test_a_worker_of_another_commit_is_refused(lone_scheduler, tmp_path):
    """The worker runs a copy of the library committed in another repository: another commit, the
    situation of a cluster node left on an older checkout. Nothing is submitted."""
    checkout = tmp_path / "checkout"
    shutil.copytree(ROOT / "localization", checkout / "localization", ignore=shutil.ignore_patterns("__pycache__"))
    git = ["git", "-c", "user.name=test", "-c", "user.email=test@localhost", "-c", "commit.gpgsign=false"]
    # the worker's Python writes bytecode next to the copy (the Makefile unsets PYTHONDONTWRITEBYTECODE):
    # ignored as in the project's own .gitignore, else the copy would count as "+uncommitted"
    (checkout / ".gitignore").write_text("__pycache__/\n*.pyc\n", encoding="utf-8")
    subprocess.run([*git, "init", "-q"], cwd=checkout, check=True)
    subprocess.run([*git, "add", "localization", ".gitignore"], cwd=checkout, check=True)
    subprocess.run([*git, "commit", "-q", "-m", "another commit"], cwd=checkout, check=True)
    other = subprocess.run(["git", "rev-parse", "HEAD"], cwd=checkout, capture_output=True, text=True).stdout.strip()
    ours = jobs.project_version().commit
    worker = _start_worker(lone_scheduler, checkout, tmp_path)
    expected = re.escape(f"runs commit {other} of the project, the client {ours}")
    with pytest.raises(jobs.WorkerMismatchError, match=expected):
        _run_against(lone_scheduler, worker, tmp_path)
    assert not (tmp_path / "store").exists() or not any((tmp_path / "store").iterdir())


@pytest.mark.slow
def test_a_worker_without_the_project_is_refused(lone_scheduler, tmp_path):
    """The worker's ``localization`` cannot be imported (a package that raises ImportError shadows the
    installed one: a node where the project is not installed)."""
    shadow = tmp_path / "shadow" / "localization"
    shadow.mkdir(parents=True)
    (shadow / "__init__.py").write_text("raise ImportError('the project is not installed here')\n")
    worker = _start_worker(lone_scheduler, shadow.parent, tmp_path)
    with pytest.raises(jobs.WorkerMismatchError, match=r"worker tcp://127\.0\.0\.1:\d+ cannot import the project"):
        _run_against(lone_scheduler, worker, tmp_path)
