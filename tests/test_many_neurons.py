"""The many-neuron experiments (localization.experiments.many_neurons) and their drawing code."""

import dataclasses
import json
import math

import jax
import jax.numpy as jnp
import matplotlib
import numpy as np
import pytest

from localization import experiments as ex
from localization import field_analysis, initialisation, train
from localization.figures import many_neurons as draw

matplotlib.use("Agg")

SMALL = ex.PopulationSettings(n=12, K=3, lr=0.5, batch=64, steps=20, inits=2, checkpoints=3)


@pytest.mark.slow
def test_committee_of_one_relu_unit_trains_like_the_single_neuron():
    # SCM with K = 1 ReLU unit and no bias is M2: same initialisation, same data stream, same weights.
    s = SMALL.replace(activation="relu", K=1, bias=False, init_scale=1.0)
    key = jax.random.key(4)
    pop = ex.train_population(key, s, dtype=jnp.float64)
    w0 = initialisation.init_params(jax.random.fold_in(key, 0), 1, 12, 1.0, num=2, dtype=jnp.float64).w[:, 0]
    neuron = train.train_online(
        jax.random.fold_in(key, 1),
        s.task(),
        w0,
        lr=s.lr,
        batch=s.batch,
        steps=s.steps,
        checkpoints=3,
        dtype=jnp.float64,
    )
    np.testing.assert_allclose(pop.fields[:, :, 0], np.asarray(neuron.weights), rtol=0, atol=1e-12)
    np.testing.assert_allclose(pop.times, [0.0, 5.0, 10.0])
    assert pop.readout is None and pop.bias is None and not pop.diverged.any()


@pytest.mark.slow
def test_grid_input_uses_the_same_code_and_flattened_fields():
    s = SMALL.replace(n=(4, 3), model="two_layer", activation="relu", lr=0.2)
    pop = ex.train_population(jax.random.key(0), s)
    assert s.N == 12 and s.shape == (4, 3)
    assert pop.fields.shape == (2, 3, 3, 12) and pop.readout.shape == (2, 3, 3) and pop.bias.shape == (2, 3, 3)
    assert np.all(np.isfinite(pop.fields))
    # training moved the fields, and the readout started near 1 (the paper's code)
    assert np.abs(pop.fields[:, -1] - pop.fields[:, 0]).max() > 0
    assert abs(pop.readout[:, 0].mean() - 1.0) < 0.5


@pytest.mark.slow
def test_divergence_is_flagged_not_returned_silently():
    pop = ex.train_population(jax.random.key(0), SMALL.replace(lr=1e12, activation="relu", bias=False))
    assert pop.diverged.all() and pop.converged_final.shape == (0, 3, 12)
    ok = ex.train_population(jax.random.key(0), SMALL)
    assert not ok.diverged.any() and np.array_equal(ok.converged_final, ok.final)


def test_paper_settings():
    assert (ex.FIG6_KUR10.K, ex.FIG6_KUR10.lr, ex.FIG6_KUR10.init_scale, ex.FIG6_KUR10.param) == (10, 100.0, 0.1, 10.0)
    assert ex.FIG6_KUR4.param == 4.0 and ex.FIG7_RELU_KUR30.K == 100 and ex.FIG7_SIGMOID_KUR4.lr == 80.0
    assert ex.FIG1_GRID.N == 900 and ex.FIG1_GRID.shape == (30, 30)


@pytest.mark.slow
def test_fig1_chapter_scale_and_control_share_initialisation_and_stream():
    """fig1_populations trains NLGP(100) and the NLGP(0.01) control from the same initial fields on the same
    latent stream: identical at step 0, different after training, on the chapter's torus shape."""
    assert ex.FIG1_CHAPTER.shape == (20, 20) and ex.FIG1_CHAPTER.K == ex.FIG1_GRID.K
    assert (ex.FIG1_CHAPTER.activation, ex.FIG1_CHAPTER.bias, ex.FIG1_CHAPTER.lr) == ("relu", False, 3.0)
    runs = ex.fig1_populations(jax.random.key(3), n=(5, 4), K=3, batch=32, steps=6, checkpoints=3)
    assert list(runs) == ["NLGP(100)", "NLGP(0.01)"]
    a, b = runs["NLGP(100)"], runs["NLGP(0.01)"]
    assert a.fields.shape == (1, 3, 3, 20) and (a.settings.param, b.settings.param) == (100.0, 0.01)
    np.testing.assert_array_equal(a.fields[:, 0], b.fields[:, 0])
    assert np.abs(a.final - b.final).max() > 0


def test_fig1_record_reader(tmp_path):
    with pytest.raises(FileNotFoundError, match="benchmarks/record_fig1.py"):
        ex.read_fig1_record(tmp_path / "missing.npz")
    # a record in the format of benchmarks/record_fig1.py round-trips, settings included
    s = ex.FIG1_GRID.replace(checkpoints=3)
    meta = {"settings": {k: list(x) if isinstance(x, tuple) else x for k, x in dataclasses.asdict(s).items()}, "box": 8}
    rng = np.random.default_rng(0)
    path = tmp_path / "rec.npz"
    arrays = dict(
        fields=rng.normal(size=(20, 900)).astype(np.float32),
        initial=np.zeros((20, 900), np.float32),
        steps=np.array([0, 5000, 10000]),
        share=rng.uniform(size=(3, 20)),
        ipr=rng.uniform(size=(3, 20)),
    )
    np.savez_compressed(path, **arrays, meta=np.array(json.dumps(meta)))
    rec = ex.read_fig1_record(path)
    assert rec.settings == s and rec.meta["box"] == 8 and rec.steps.dtype == np.int64
    np.testing.assert_array_equal(rec.fields, arrays["fields"].astype(np.float64))


@pytest.mark.slow
def test_bad_settings_are_named():
    key = jax.random.key(0)
    with pytest.raises(TypeError, match="settings must be a PopulationSettings"):
        ex.train_population(key, {"K": 3})
    with pytest.raises(ValueError, match="'committee' or 'two_layer'"):
        ex.train_population(key, SMALL.replace(model="neuron", activation="relu"))
    with pytest.raises(ValueError, match="checkpoints"):
        ex.train_population(key, SMALL.replace(checkpoints=1))
    with pytest.raises(ValueError, match="activation"):
        ex.train_population(key, SMALL.replace(activation="tanh"))
    wrong = initialisation.init_params(key, SMALL.K, SMALL.n, num=SMALL.inits + 1)
    with pytest.raises(ValueError, match=r"params must be Params with w of shape \(inits, K, N\)"):
        ex.train_population(key, SMALL, params=wrong)
    with pytest.raises(TypeError, match="task must be a data.LengthscaleTask or None, got dict"):
        ex.train_population(key, SMALL, task={"family": "Kur"})


@pytest.mark.slow
def test_a_given_task_replaces_the_settings_task():
    """task=settings.task() trains exactly as the default; another task (an elliptical law, which
    family_task does not name) gives other fields from the same key."""
    from localization import data

    key = jax.random.key(3)
    default = ex.train_population(key, SMALL)
    same = ex.train_population(key, SMALL, task=SMALL.task())
    np.testing.assert_array_equal(same.fields, default.fields)
    radial = data.LengthscaleTask.of(data.RadialElliptical, xi=SMALL.xi, dim=SMALL.N)
    other = ex.train_population(key, SMALL, task=radial)
    np.testing.assert_array_equal(other.fields[:, 0], default.fields[:, 0])  # the same initialisations
    assert np.abs(other.fields[:, -1] - default.fields[:, -1]).max() > 1e-3


def test_draw_fields_ring_and_grid():
    from matplotlib.figure import Figure

    fig = Figure()
    axes = fig.subplots(1, 3)
    ring = np.vstack([np.sin(np.arange(12.0)), np.eye(12)[3]])
    drawn = draw.draw_fields(axes, ring, 12)
    assert len(drawn) == 2 and not axes[2].get_visible()
    y = drawn[0].lines[-1].get_ydata()
    assert math.isclose(np.max(np.abs(y)), 1.0)  # scaled to its largest entry
    # axes with a scale: the sites 0 and N/2, the scale -1, 0, 1; tick labels on the outer panels only
    assert list(drawn[0].get_xticks()) == [0, 6] and list(drawn[0].get_yticks()) == [-1.0, 0.0, 1.0]
    assert drawn[0].yaxis.get_tick_params()["labelleft"] and not drawn[1].yaxis.get_tick_params()["labelleft"]
    im = draw.draw_fields(fig.subplots(1, 1), np.arange(12.0)[None] - 3, (4, 3))[0].images[0]
    assert im.get_array().shape == (4, 3) and im.get_clim() == (-1.0, 1.0)
    with pytest.raises(ValueError, match="prod"):
        draw.draw_fields(axes, ring, 13)
    with pytest.raises(ValueError, match="finite"):
        draw.draw_fields(axes, ring * np.nan, 12)
    with pytest.raises(ValueError, match="at least 2 panels"):
        draw.draw_fields(axes[:1], ring, 12)


def test_draw_share_histograms_validates():
    from matplotlib.figure import Figure

    ax = Figure().subplots()
    draw.draw_share_histograms(ax, {"a": [0.1, 0.9], "b": np.full((2, 2), 0.5)})
    assert len(ax.patches) == 2 and ax.get_xlim() == (0.0, 1.0)
    # the dashed line is the book's threshold of a localized field unless another is given
    (dashed,) = [line for line in ax.get_lines() if line.get_linestyle() == "--"]
    assert dashed.get_xdata()[0] == field_analysis.LOCALIZED_SHARE == 0.8
    with pytest.raises(ValueError, match="threshold"):
        draw.draw_share_histograms(ax, {"a": [0.1]}, 1.5)
    with pytest.raises(ValueError, match=r"shares\['a'\]"):
        draw.draw_share_histograms(ax, {"a": [1.5]}, 0.8)


def test_draw_filter_gallery_rows_and_title():
    from matplotlib.figure import Figure

    fig = Figure()
    drawn = draw.draw_filter_gallery(fig, np.eye(12)[:7], 12, "seven filters", cols=3)
    assert len(drawn) == 6 and fig._suptitle.get_text() == "seven filters"  # two full rows of three
    assert fig._supxlabel.get_text() == "site $i$ on the ring of $N=12$"
    assert fig._supylabel.get_text() == draw.FIELD_SCALE_LABEL
    grid = Figure()
    one_row = draw.draw_filter_gallery(grid, np.eye(16)[:2], (4, 4), "two", cols=5)
    assert len(one_row) == 2 and one_row[0].images[0].get_array().shape == (4, 4)
    # an image gallery states its extent and has a colour bar of the scale -1 .. 1
    assert "4 × 4 torus" in grid._supxlabel.get_text()
    (bar,) = [ax for ax in grid.axes if ax not in one_row and ax.get_visible() and ax.get_label() == "<colorbar>"]
    assert bar.get_ylim() == (-1.0, 1.0)
