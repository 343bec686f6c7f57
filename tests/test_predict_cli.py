"""``python -m localization predict FILE``: the report, ``--json``, ``--train``, and every bad file (exit 2).

The bad files are checked twice: in-process through ``localization.__main__.main`` (fast) and as a
real command in a subprocess (slow: each start imports JAX, ~2 s). Every run happens in a directory
holding only its input, which must hold nothing else afterwards (the command writes nothing).
"""

import json
import math
import os
import subprocess
import sys

import jax
import numpy as np
import pytest

from localization import data
from localization.__main__ import main


def nlgp_samples(num=600, n=16):
    return np.asarray(data.NLGP(xi=2.0, gain=10.0).sample(jax.random.key(1), num, n), dtype=np.float64)


def run_command(args, cwd):
    """Run ``python -m localization predict ARGS`` in ``cwd``; return the completed process."""
    env = dict(os.environ, JAX_PLATFORMS="cpu")
    before = sorted(p.name for p in cwd.iterdir())
    done = subprocess.run(
        [sys.executable, "-m", "localization", "predict", *args],
        cwd=cwd,
        capture_output=True,
        text=True,
        env=env,
        timeout=300,
    )
    assert sorted(p.name for p in cwd.iterdir()) == before, "predict wrote to its directory"
    return done


# --------------------------------------------------------------------------------------- the bad files
def _write_text(path):
    path.write_text("not an array\n")


def _write_objects(path):
    np.save(path, np.array([{"a": 1}, None], dtype=object), allow_pickle=True)


def _write(array):
    def write(path):
        np.save(path, array)

    return write


def _write_npz(**arrays):
    def write(path):
        np.savez(path, **arrays)

    return write


_CONSTANT = np.random.default_rng(0).standard_normal((40, 5))
_CONSTANT[:, 3] = 2.5
_NAN = np.random.default_rng(0).standard_normal((40, 5))
_NAN[7, 2] = math.nan

#: (file name, writer or None for a missing file, extra arguments, words the message must contain)
BAD = {
    "missing": ("gone.npy", None, [], "no such file"),
    "not npy": ("notes.npy", _write_text, [], "not a readable .npy or .npz file"),
    "objects": ("objects.npy", _write_objects, [], "holds Python objects"),
    "strings": ("words.npy", _write(np.array([["a", "b"]] * 30)), [], "must be a real (integer or floating) array"),
    "nan": ("nan.npy", _write(_NAN), [], "NaN/inf"),
    "1-d": ("flat.npy", _write(np.arange(50.0)), [], "ndim 1"),
    "4-d": ("deep.npy", _write(np.ones((30, 2, 2, 2))), [], "ndim 4"),
    "few samples": ("few.npy", _write(np.random.default_rng(0).standard_normal((10, 5))), [], "at least 20 samples"),
    "constant": ("constant.npy", _write(_CONSTANT), [], "coordinate 3 has zero variance"),
    "several arrays": ("two.npz", _write_npz(x=_NAN, y=_CONSTANT), [], "several arrays (x, y); choose one with"),
    "unknown array": ("one.npz", _write_npz(x=_CONSTANT), ["--array", "z"], "has no such array (it holds: x)"),
    "bad shape": ("shape.npy", _write(nlgp_samples(30, 16)), ["--shape", "3", "5"], "shape (3, 5) has 15 sites"),
    "few resamples": ("ok.npy", _write(nlgp_samples(30, 16)), ["--resamples", "5"], "--resamples: resamples must be"),
}


def _bad_file(tmp_path, case):
    name, write, extra, message = BAD[case]
    path = tmp_path / name
    if write is not None:
        write(path)
    return [str(path), *extra], message


@pytest.mark.parametrize("case", sorted(BAD))
def test_a_bad_file_exits_2_naming_the_problem(case, tmp_path, capsys):
    args, message = _bad_file(tmp_path, case)
    with pytest.raises(SystemExit) as exit_info:
        main(["predict", *args])
    assert exit_info.value.code == 2
    err = capsys.readouterr().err
    assert message in err, err


@pytest.mark.slow
@pytest.mark.parametrize("case", sorted(BAD))
def test_the_command_exits_2_on_a_bad_file(case, tmp_path):
    args, message = _bad_file(tmp_path, case)
    done = run_command(args, tmp_path)
    assert done.returncode == 2 and message in done.stderr, done.stderr
    assert done.stdout == ""


# --------------------------------------------------------------------------------------- good files
@pytest.mark.slow
def test_the_report_of_a_good_file(tmp_path):
    np.save(tmp_path / "nlgp.npy", nlgp_samples())
    done = run_command(["nlgp.npy", "--quiet", "--resamples", "50"], tmp_path)
    assert done.returncode == 0, done.stderr
    out = done.stdout
    for words in (
        "600 samples of N = 16 inputs (a ring of 16 sites)",
        "excess kurtosis of the coordinates: median",
        "95% interval",
        "phi - line",
        "verdict: localizes",
        "N -> infinity",
    ):
        assert words in out, out
    assert "training" not in out


@pytest.mark.slow
def test_json_of_patches_in_an_npz(tmp_path):
    patches = nlgp_samples(300, (6, 6)).reshape(300, 6, 6)
    np.savez(tmp_path / "patches.npz", patches=patches)
    done = run_command(["patches.npz", "--json", "--resamples", "20", "--key-seed", "3"], tmp_path)
    assert done.returncode == 0, done.stderr
    out = json.loads(done.stdout)  # one JSON object, nothing else on stdout
    assert out["shape"] == [6, 6] and out["n_inputs"] == 36 and out["n_samples"] == 300
    assert out["verdict"] == "localizes" and len(out["coordinate_kurtosis"]) == 36
    assert len(out["a"]) == 21 and np.asarray(out["deviation_band"]).shape == (2, 21)
    numbers = [x for key, value in out.items() if key not in ("file", "array") for x in np.ravel(value)]
    assert all(math.isfinite(x) for x in numbers if isinstance(x, float))


@pytest.mark.slow
def test_train_checks_the_prediction(tmp_path):
    np.save(tmp_path / "nlgp40.npy", nlgp_samples(2000, 40))
    done = run_command(["nlgp40.npy", "--train", "--json", "--resamples", "20"], tmp_path)
    assert done.returncode == 0, done.stderr
    out = json.loads(done.stdout)
    training = out["training"]
    assert training["against"] == "white" and training["inits"] == 8 and training["time"] == pytest.approx(300)
    assert out["verdict"] == "localizes" and training["agrees"] is True, training
