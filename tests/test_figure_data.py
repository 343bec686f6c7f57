"""``python -m localization figures --data``: the numbers behind each figure (figures.export:
data_tables, plotted_tables, write_data). A synthetic Built checks the writer (every kind of
value it takes, the files, their headers, and that the numbers read back equal the data); the cheap
registered figures and the command line check it end to end."""

import dataclasses
import json
from pathlib import Path
from typing import NamedTuple

import jax
import numpy as np
import pytest

from localization import figures
from localization.__main__ import main
from localization.figures import export, registry

NAME = "fig3_amplifier"  # a registered name for the synthetic data (the header names its chapter)


class Curves(NamedTuple):
    """Synthetic results.

    Attributes
    ----------
    times : (C,) checkpoint times ``steps × lr``.
    ipr : (P, C) IPR of each task along the trajectory.
    """

    times: np.ndarray
    ipr: np.ndarray


@dataclasses.dataclass(frozen=True)
class Settings:
    """Synthetic settings.

    Attributes
    ----------
    n : input size.
    gains : the gains swept.
    """

    n: int
    gains: tuple
    family: str


def _synthetic():
    rng = np.random.default_rng(3)
    times = np.linspace(0.0, 4.0, 9)
    data = {
        "curves": Curves(times, rng.normal(size=(3, 9))),
        "final": {"NLGP($g = 100$)": 0.55, ("Kur", 4.5): np.float64(0.02)},
        "mean": rng.normal(size=9),
        "w0": jax.numpy.asarray(rng.normal(size=40)),
        "key": jax.random.key(5),
        "settings": Settings(40, (0.1, 1.0, 10.0), "NLGP"),
        "loss": None,
        "converged": True,
    }
    fig = registry.new_figure((4.0, 3.0))
    ax, ax2 = fig.subplots(1, 2)
    ax.plot(times, data["mean"], label="mean")
    ax.errorbar(times, data["mean"], yerr=0.1 + 0 * times, fmt="o")
    ax.scatter([1.0, 2.0], [3.0, 4.0])
    ax.hist([0.1, 0.2, 0.2, 0.9], bins=[0.0, 0.5, 1.0])
    ax.set_xlabel("time $t$ (steps × lr)")
    ax2.imshow(data["curves"].ipr, extent=(0, 4, 0, 3))
    return registry.Built(fig, data)


def _header(path):
    """The JSON header of a CSV: its '#' lines up to the first column description."""
    lines = [line[2:] for line in path.read_text().splitlines()[1:] if line.startswith("#")]
    end = next(i for i, line in enumerate(lines) if line.startswith("column "))
    return json.loads("\n".join(lines[:end])), lines[end:]


def _read_csv(path):
    """Column names and numbers of a CSV the writer wrote (names on the first line, '#' header)."""
    names = path.read_text().splitlines()[0].split(",")
    return names, np.loadtxt(path, delimiter=",", skiprows=1, ndmin=2)


def test_writer_writes_csv_npz_with_headers_and_the_numbers_read_back_equal_the_data(tmp_path, monkeypatch):
    monkeypatch.setenv("LOCALIZATION_SEED", "7")
    built = _synthetic()
    written = export.write_data(NAME, built, tmp_path, "paper")
    names = sorted(p.name for p in written)
    assert names == sorted(
        f"{NAME}.{part}"
        for part in ["curves.csv", "mean.csv", "w0.csv", "key.csv", "table.csv", "npz", "plotted.csv", "plotted.npz"]
    ), names
    assert all(p.parent == tmp_path and p.stat().st_size > 0 for p in written)
    # curves: one column per 1-D array of a top-level field, named with its unit, read back exactly
    columns, values = _read_csv(tmp_path / f"{NAME}.curves.csv")
    assert columns == ["curves.times [steps*lr]"] and values.shape == (9, 1)
    np.testing.assert_array_equal(values[:, 0], built.data["curves"].times)
    for part, expected in [("mean", built.data["mean"]), ("w0", built.data["w0"])]:
        columns, values = _read_csv(tmp_path / f"{NAME}.{part}.csv")
        assert columns == [part]
        np.testing.assert_array_equal(values[:, 0], np.asarray(expected))
    columns, values = _read_csv(tmp_path / f"{NAME}.key.csv")
    np.testing.assert_array_equal(values[:, 0], jax.random.key_data(built.data["key"]))
    # the header: figure, chapter, scale, seed, version, commit, settings, and each column's meaning
    header, described = _header(tmp_path / f"{NAME}.curves.csv")
    assert header["figure"] == NAME and header["chapter"] == "book/amplifier.md" and header["scale"] == "paper"
    assert header["seed"] == 7 and header["seed_variable"] == "LOCALIZATION_SEED"
    assert header["package"].startswith("localization ") and header["commit"]
    assert header["settings"] == {
        "settings.class": "Settings",
        "settings.n": 40,
        "settings.gains": [0.1, 1.0, 10.0],
        "settings.family": "NLGP",
        "loss": None,
    }
    assert header["builder_constants"]["FIG3_MODELS.Kur_k=5.k"] == 5.0  # the builder module's settings
    assert described == [
        "column curves.times [steps*lr]: Curves.times: (C,) checkpoint times ``steps × lr``. [float64, length 9]"
    ]
    # the table of scalars (a quantity name per row; the numbers read back)
    rows = [line.split(",") for line in (tmp_path / f"{NAME}.table.csv").read_text().splitlines()]
    assert rows[0] == ["quantity", "value"]
    body = [r for r in rows[1:] if not r[0].startswith("#")]
    assert [r[0] for r in body] == ["final.NLGP_g=100", "final.Kur_4.5", "converged"]
    np.testing.assert_array_equal(
        np.loadtxt(tmp_path / f"{NAME}.table.csv", delimiter=",", usecols=1, skiprows=1), [0.55, 0.02, 1.0]
    )
    # the fields: named keys with their shapes, and the metadata entry
    with np.load(tmp_path / f"{NAME}.npz") as z:
        assert sorted(z.files) == ["curves.ipr", "metadata"]
        np.testing.assert_array_equal(z["curves.ipr"], built.data["curves"].ipr)
        meta = json.loads(str(z["metadata"]))
    assert meta["seed"] == 7 and meta["settings"]["settings.n"] == 40 and meta["figure"] == NAME
    assert meta["arrays"]["curves.ipr"]["shape"] == [3, 9] and "(P, C) IPR" in meta["arrays"]["curves.ipr"]["meaning"]


def test_plotted_tables_read_back_every_line_marker_bar_and_image(tmp_path):
    built = _synthetic()
    export.write_data(NAME, built, tmp_path)
    path = tmp_path / f"{NAME}.plotted.csv"
    columns, rows = _read_csv(path)
    assert columns == ["panel", "artist", "segment", "x", "y"]
    header, notes = _header(path)
    assert header["seed"] == 0 and header["scale"] == "chapter"
    assert any("time $t$ (steps × lr)" in n for n in notes)  # the panel's axis label, with its unit
    line = rows[(rows[:, 0] == 0) & (rows[:, 1] == 0)]
    np.testing.assert_array_equal(line[:, 3:], np.column_stack([built.data["curves"].times, built.data["mean"]]))
    points = {tuple(r) for r in rows[:, 3:]}
    assert {(1.0, 3.0), (2.0, 4.0)} <= points  # the scatter
    assert {(0.25, 3.0), (0.75, 1.0)} <= points  # the histogram's bars (centre, top)
    ends = {
        (t, m + s * 0.1) for t, m in zip(built.data["curves"].times, built.data["mean"], strict=True) for s in (-1, 1)
    }
    assert all(any(np.allclose(e, p) for p in points) for e in ends)  # the error bars' ends
    with np.load(tmp_path / f"{NAME}.plotted.npz") as z:
        np.testing.assert_array_equal(z["panel1.image0"], built.data["curves"].ipr)
        assert json.loads(str(z["metadata"]))["arrays"]["panel1.image0"]["extent"] == [0, 4, 0, 3]


def test_writer_refuses_what_it_cannot_write_naming_where_it_is(tmp_path):
    fig = registry.new_figure((2.0, 2.0))
    with pytest.raises(TypeError, match=r"cannot write data\['runs'\]\['a'\]\['0'\], a builtins.object"):
        export.write_data(NAME, registry.Built(fig, {"runs": {"a": [object()]}}), tmp_path)
    with pytest.raises(TypeError, match="built must be a Built"):
        export.write_data(NAME, (fig, None), tmp_path)
    with pytest.raises(ValueError, match="registered figure"):
        export.data_tables("fig99", None)
    with pytest.raises(ValueError, match="scale must be one of"):
        export.data_tables(NAME, None, "poster")
    assert not list(tmp_path.iterdir())


def test_distinct_keys_stay_distinct_columns():
    files = export.data_tables(NAME, {"a b": np.arange(3.0), "a_b": np.ones(3)})
    text = files[f"{NAME}.curves.csv"][1]
    assert text.splitlines()[0] == "a_b,a_b~1"


CHEAP = ["fig3_amplifier", "mechanism_gain", "mechanism_flow", "mechanism_ipr"]


@pytest.mark.slow
@pytest.mark.parametrize("name", CHEAP)
def test_cheap_registered_figures_write_their_data(name, tmp_path):
    """The builder's data is writable, every file parses, and the CSV numbers equal the data's arrays."""
    built = figures.FIGURES[name].build("chapter")
    written = export.write_data(name, built, tmp_path)
    assert tmp_path / f"{name}.plotted.csv" in written
    arrays = {}
    for leaf in export._flatten(built.data, (), "", False, name) if built.data is not None else []:
        if isinstance(leaf.value, np.ndarray) and leaf.value.ndim == 1 and not leaf.setting:
            arrays[".".join(leaf.path)] = leaf.value
    seen = set()
    for path in written:
        if path.suffix == ".csv" and not path.name.endswith("table.csv"):
            columns, values = _read_csv(path)
            assert _header(path)[0]["figure"] == name and values.shape[1] == len(columns)
            for j, column in enumerate(columns):
                key = column.split(" [")[0]
                if key in arrays:
                    np.testing.assert_array_equal(values[:, j], arrays[key])
                    seen.add(key)
        elif path.suffix == ".npz":
            with np.load(path) as z:
                assert "metadata" in z.files and json.loads(str(z["metadata"]))["figure"] == name
    assert seen == set(arrays)


@pytest.mark.slow
def test_figures_data_option_writes_the_files_beside_the_png(capsys, tmp_path):
    code = main(["figures", "--out", str(tmp_path), "--only", NAME, "--data", "--no-progress"])
    out, err = capsys.readouterr()
    assert code == 0 and not err and f"data: {NAME}.curves.csv, {NAME}.plotted.csv" in out, out
    assert sorted(p.name for p in Path(tmp_path).iterdir()) == [
        f"{NAME}.curves.csv",
        f"{NAME}.plotted.csv",
        f"{NAME}.png",
    ]
