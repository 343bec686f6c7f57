"""The claims sweep and the recorded experiment sweeps run through localization.jobs: the same records as
a serial run, resume from the per-job store, and refuse a chapter whose source is not the one hashed.

The claims tests execute a two-cell chapter written here (not a book chapter: the machine is shared);
the experiment test runs the near-zero sweep at tiny settings. The clusters are local (loopback).
"""

import json
import re
from pathlib import Path

import jax
import pytest

from localization import jobs
from localization.book import claims, claims_sweep
from localization.experiments import near_zero, runs

DEMO = """---
kernelspec:
  display_name: Python 3
  language: python
  name: python3
---

# A chapter of two claims

```{code-cell} ipython3
import numpy as np

from localization import book
from localization.book.page import seed

x = np.random.default_rng(seed()).standard_normal(200)
```

```{code-cell} ipython3
book.claim("demo-mean", float(x.mean()), "in", (-0.5, 0.5), says="the sample mean is near zero")
book.claim("demo-spread", float(x.std()), ">", 1.0, says="the spread exceeds one")
```
"""


@pytest.fixture(scope="module")
def cluster():
    from distributed import LocalCluster

    with LocalCluster(n_workers=2, threads_per_worker=1, processes=True, memory_limit=0, dashboard_address=":0") as c:
        yield c.scheduler_address


@pytest.fixture
def demo_root(tmp_path):
    """A checkout holding one chapter, ``book/demo.md``."""
    root = tmp_path / "checkout"
    (root / "book").mkdir(parents=True)
    (root / "book" / "demo.md").write_text(DEMO, encoding="utf-8")
    return root


def _without_seconds(record: dict) -> dict:
    record = json.loads(json.dumps(record))
    for run in record["runs"].values():
        run.pop("seconds")
    return record


def test_run_chapter_refuses_another_source_and_bad_arguments(demo_root):
    digest = claims.source_hash(demo_root / "book" / "demo.md")
    with pytest.raises(ValueError, match=r"digest: .*demo\.md has source hash .* the sweep hashed 000000000000"):
        claims_sweep.run_chapter("demo", 1, "0" * 64, str(demo_root))
    with pytest.raises(ValueError, match="no .*absent.md on this worker"):
        claims_sweep.run_chapter("absent", 1, digest, str(demo_root))
    with pytest.raises(ValueError, match="seed must be a non-negative int"):
        claims_sweep.run_chapter("demo", -1, digest, str(demo_root))
    with pytest.raises(ValueError, match="chapter must be"):
        claims_sweep.run_chapter("../demo", 1, digest, str(demo_root))


def test_a_baseline_on_a_scheduler_is_refused(monkeypatch):
    monkeypatch.setenv(jobs.SCHEDULER_ENV, "tcp://127.0.0.1:8786")
    with pytest.raises(ValueError, match="baseline 'abc1234' needs a local cluster"):
        claims_sweep.carry_over(["intro"], 100, baseline="abc1234", progress=False)


@pytest.mark.slow
def test_the_claims_sweep_on_jobs_writes_the_serial_record(cluster, demo_root, tmp_path):
    """Seeds 1-3 of the demo chapter executed one after the other in this process, and as jobs on two
    workers: the same observations in the same order, the same record (run times apart)."""
    seeds = (1, 2, 3)
    digest = claims.source_hash(demo_root / "book" / "demo.md")
    serial = {s: claims_sweep.run_chapter("demo", s, digest, str(demo_root)) for s in seeds}
    outcomes = {s: (r["seconds"], r["error"]) for s, r in serial.items()}
    lines = [line for s in seeds for line in serial[s]["observations"]]
    assert [line["seed"] for line in lines] == [1, 1, 2, 2, 3, 3] and not any(e for _, e in outcomes.values())
    expected = claims_sweep._merge("demo", seeds, outcomes, lines, tmp_path / "serial", "c", digest)

    store = tmp_path / "store"
    got, got_lines, batch = claims_sweep._execute(
        ["demo"], seeds, 2, False, (demo_root,), scheduler=cluster, store=store
    )
    assert [job.name for job in batch] == ["demo.1", "demo.2", "demo.3"]
    assert got_lines["demo"] == lines  # values exactly, in job order (not completion order)
    record = claims_sweep._merge("demo", seeds, got["demo"], got_lines["demo"], tmp_path / "jobs", "c", digest)
    assert _without_seconds(record) == _without_seconds(expected)
    assert sorted(p.name for p in store.iterdir()) == ["demo.1.json", "demo.2.json", "demo.3.json"]


@pytest.mark.slow
def test_the_claims_sweep_resumes_and_refuses_a_changed_chapter(cluster, demo_root, tmp_path):
    """A store holding seed 1 (as an interrupted sweep leaves it): only seed 2 executes. A digest that
    is not the chapter's: the job refuses, the sweep fails naming it, nothing is stored for it."""
    digest = claims.source_hash(demo_root / "book" / "demo.md")
    store = tmp_path / "store"
    store.mkdir()
    stamp = jobs.project_version(("book", "localization")).stamp
    kwargs = {"chapter": "demo", "seed": 1, "digest": digest, "root": str(demo_root)}
    job = jobs.Job("demo.1", "localization.book.claims_sweep:run_chapter", kwargs, digest, 1)
    marker = {"id": "demo-mean", "says": "s", "op": "in", "bound": [-0.5, 0.5], "holds": True, "seed": 1}
    stored = {"seconds": 7.0, "error": None, "observations": [{**marker, "value": 0.125, "loose": None}]}
    entry = {"name": "demo.1", "identity": job.identity(stamp), "result": stored}
    (store / "demo.1.json").write_text(json.dumps(entry))

    outcomes, lines, _ = claims_sweep._execute(["demo"], (1, 2), 2, False, (demo_root,), scheduler=cluster, store=store)
    assert outcomes["demo"][1] == (7.0, None)  # the stored result, not an execution
    assert outcomes["demo"][2][1] is None and outcomes["demo"][2][0] > 0
    assert [(line["seed"], line["id"]) for line in lines["demo"]] == [
        (1, "demo-mean"),
        (2, "demo-mean"),
        (2, "demo-spread"),
    ]
    assert lines["demo"][0]["value"] == 0.125

    with pytest.raises(jobs.JobFailedError, match=r"demo\.3: ValueError: digest: ") as caught:
        claims_sweep._execute(
            ["demo"], (3,), 2, False, (demo_root,), digests={("demo", 0): "f" * 64}, scheduler=cluster, store=store
        )
    assert caught.value.results == {} and not (store / "demo.3.json").exists()


# -------------------------------------------------------------------------------------------------
# the experiment sweeps
# -------------------------------------------------------------------------------------------------
TINY = near_zero.NEAR_ZERO.replace(gains=(10.0,), ks=(5.4,), wide_gains=(), wide_ks=(6.1,), inits=2)
TINY = TINY.replace(steps=20, checkpoints=3, seeds=(0, 1), batch=64)


def test_run_point_refuses_bad_arguments():
    settings = runs._as_json(TINY)
    with pytest.raises(ValueError, match="record must be one of"):
        runs.run_point("data_init", settings, 0)
    with pytest.raises(ValueError, match="n must be an input size for the large_n records"):
        runs.run_point("near_zero", settings, 0, n=40)
    with pytest.raises(ValueError, match="n must be an input size"):
        runs.run_point("large_n", settings, 0)
    with pytest.raises(ValueError, match="seed must be"):
        runs.run_point("near_zero", settings, -1)
    with pytest.raises(TypeError, match="settings must be a dict"):
        runs.run_point("near_zero", TINY, 0)


def test_settings_round_trip_through_json():
    for settings in (TINY, near_zero.BATCH_SCAN, runs.RUNS["large_n"]):
        assert runs._from_json(type(settings), runs._as_json(settings)) == settings


def test_resuming_a_record_of_other_settings_is_refused_before_any_job(tmp_path, monkeypatch):
    monkeypatch.setattr(near_zero, "NEAR_ZERO", TINY)
    monkeypatch.setattr(runs, "JOB_STORE", tmp_path / "store")
    path = tmp_path / "nz.json"
    path.write_text(json.dumps({"settings": runs._as_json(TINY.replace(inits=3)), "seeds": []}))
    with pytest.raises(SystemExit):  # argparse's error: exit code 2, before a cluster is started
        runs.main(["near_zero", str(path), "--resume", "--scheduler", "tcp://127.0.0.1:9"])
    assert not (tmp_path / "store").exists()


@pytest.mark.slow
def test_a_recorded_sweep_on_jobs_writes_the_serial_record_byte_for_byte(cluster, tmp_path, monkeypatch):
    """The near-zero record at tiny settings, two seeds: in this process, and as two jobs on two workers.
    The files are equal byte for byte once each seed's run time is blanked (float32 training, the same
    keys, the same XLA on the same machine: exact)."""
    monkeypatch.setattr(near_zero, "NEAR_ZERO", TINY)
    monkeypatch.setattr(runs, "JOB_STORE", tmp_path / "store")
    serial, on_jobs = tmp_path / "serial.json", tmp_path / "jobs.json"
    with jax.enable_x64(False):  # as the command runs (the tests' conftest turns float64 on)
        runs.main(["near_zero", str(serial), "--serial"])
    record = runs.main(["near_zero", str(on_jobs), "--scheduler", cluster])
    assert [entry["seed"] for entry in record["seeds"]] == [0, 1]

    def text(path: Path) -> str:  # the command names the file written
        written = path.read_text(encoding="utf-8").replace(str(path), "PATH")
        return re.sub(r'"seconds":[0-9.]+', '"seconds":0', written)

    assert text(on_jobs) == text(serial)
    assert not any((tmp_path / "store" / "near_zero").iterdir())  # discarded once the record is written
