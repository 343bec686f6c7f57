"""The builders and drawing helpers of the mechanism, effective-dynamics, many-neuron, ICA and
two-dimensions chapters' figures (``localization.figures.<chapter>``): what the cheap builders
return, checked against closed forms and properties, and the argument checks of the rest (the
expensive builders run in their chapters, whose outputs tests/references hold)."""

import math

import jax
import matplotlib
import numpy as np
import pytest
from matplotlib.figure import Figure

from localization import field_analysis, figures, plotting
from localization.experiments import mechanism as em
from localization.figures import effective_dynamics, effective_dynamics_claims, mechanism, sgd_vs_flow, two_dimensions
from localization.theory import mechanism as mech


def test_every_chapter_module_registers_its_figures_for_its_chapter():
    chapters = {
        mechanism: "mechanism",
        figures.gaussian: "gaussian",
        effective_dynamics: "effective_dynamics",
        effective_dynamics_claims: "effective_dynamics",
        figures.many_neurons: "many_neurons",
        figures.ica: "ica",
        two_dimensions: "two_dimensions",
    }
    for module, chapter in chapters.items():
        built = [e for e in figures.FIGURES.values() if e.build.__module__ == module.__name__]
        assert built, module.__name__
        for entry in built:
            assert entry.chapter == chapter and getattr(module, entry.build.__name__) is entry.build, entry.name


@pytest.mark.slow
def test_mechanism_gain_is_the_theory_gain_and_constant_for_gaussian_data():
    with matplotlib.rc_context(plotting.BOOK_STYLE):
        built = mechanism.mechanism_gain()
    assert isinstance(built, figures.Built) and isinstance(built.figure, Figure)
    gain = built.data
    assert np.array_equal(gain.a, em.GAIN_GRID) and set(gain.gains) == set(mechanism.COLORS)
    assert np.max(np.abs(gain.gains["Gaussian"] - mech.GAUSSIAN_SLOPE)) < 1e-12  # G = sqrt(2/pi) exactly
    setting = em.setup()
    for name, g in gain.gains.items():
        assert np.max(np.abs(g - mech.effective_gain(setting.phi[name], em.GAIN_GRID))) < 1e-15, name
        assert 0 < gain.stability[name].alpha < 1, name
    # one line per task, each the gain in units of sqrt(2/pi)
    (ax,) = built.figure.get_axes()
    lines = {line.get_label(): line.get_ydata() for line in ax.get_lines() if not line.get_label().startswith("_")}
    assert set(lines) == set(gain.gains)
    assert np.allclose(lines["NLGP(3)"], gain.gains["NLGP(3)"] / mech.GAUSSIAN_SLOPE, rtol=0, atol=1e-15)


@pytest.mark.slow
def test_mechanism_flows_checkpoint_every_twenty_steps_with_times_steps_times_lr():
    with matplotlib.rc_context(plotting.BOOK_STYLE):
        built = mechanism.mechanism_flow()
    flows = built.data
    assert list(flows) == list(mechanism.COLORS)
    last = int(round(em.SNAPSHOT_TIMES[-1] / em.FLOW_LR))
    for tr in flows.values():
        steps = np.asarray(tr.steps)
        assert np.array_equal(steps, np.arange(0, last + 1, 20))
        assert np.allclose(np.asarray(tr.times), steps * em.FLOW_LR, rtol=0, atol=1e-12)
    # every flow starts from the same weights; the linear (Gaussian) flow ends in the constant state, IPR 1/N
    w = {name: np.asarray(tr.weights) for name, tr in flows.items()}
    assert all(np.array_equal(x[0], w["Gaussian"][0]) for x in w.values())
    end = w["Gaussian"][-1]
    assert abs(np.sum(end**4) / np.sum(end**2) ** 2 - 1 / em.N) < 1e-3
    assert len(built.figure.get_axes()) == 3 * len(em.SNAPSHOT_TIMES)


def test_mechanism_integrate_flows_checks_steps():
    with pytest.raises(ValueError, match="steps must be a multiple of 20"):
        em.integrate_flows(jax.random.key(0), em.setup(), 30)


def test_peak_failure_layout_is_at_most_three_per_row():
    for count, expected in {0: (1, 1), 1: (1, 1), 2: (1, 2), 3: (1, 3), 4: (2, 3), 7: (3, 3)}.items():
        rows, cols = sgd_vs_flow.peak_failure_rows(count)
        assert (rows, cols) == expected and rows * cols >= count and cols <= 3


def test_peak_failures_legend_does_not_cover_the_position_label():
    from matplotlib.backends.backend_agg import FigureCanvasAgg

    from localization import field_analysis

    x = np.arange(40)
    sgd = np.exp(-0.5 * ((x[None] - np.array([[5], [20], [30]])) / 1.5) ** 2)
    flow = np.roll(sgd, 10, axis=1)
    final = {"a": (sgd, flow)}
    agree = {"a": field_analysis.peak_agreement(sgd, flow, tol=1)}
    fig = Figure(figsize=(plotting.COLUMN_WIDTH, 2.9), layout="constrained")
    sgd_vs_flow.draw_peak_failures(fig, final, agree)
    canvas = FigureCanvasAgg(fig)
    canvas.draw()
    renderer = canvas.get_renderer()
    legend = fig.legends[0].get_window_extent(renderer)
    label = fig._supxlabel.get_window_extent(renderer)
    assert not legend.overlaps(label)


def test_peak_failures_of_lists_offsets_above_one_in_order():
    class Agreement:  # the one attribute peak_failures_of reads
        def __init__(self, offset):
            self.offset = np.asarray(offset)

    agree = {"a": Agreement([0, 2, 1, 5]), "b": Agreement([3, 0])}
    assert sgd_vs_flow.peak_failures_of(agree) == [("a", 1), ("a", 3), ("b", 0)]


def test_builders_that_take_runs_refuse_other_objects():
    with pytest.raises(TypeError, match="runs must be a Breakdown"):
        effective_dynamics.fig8_snapshots(runs={"times": []})
    with pytest.raises(TypeError, match="fig3 must be a Fig3Runs"):
        effective_dynamics_claims.peak_failures(fig3=(1, 2))
    with pytest.raises(TypeError, match="runs must be a Fig1Runs"):
        two_dimensions.fig1_share_time(runs=[])
    with pytest.raises(ValueError, match="scale must be one of"):
        effective_dynamics.fig3_sgd_vs_flow("large")


def test_the_box_is_the_books_localization_window_not_a_setting_of_its_own():
    # the book's one definition (field_analysis.localization_window): a box of a quarter of the sites, half
    # the side of the chapter's 20 x 20 torus
    assert two_dimensions.BOX == field_analysis.localization_window(two_dimensions.SETTINGS.shape) == 10
    assert not hasattr(two_dimensions, "box_side")  # the chapter's own box (a quarter of the side) is gone
    assert figures.many_neurons.WINDOW == field_analysis.localization_window(figures.many_neurons.N) == 10
    assert figures.many_neurons.LOCALIZED == field_analysis.LOCALIZED_SHARE


def test_share_time_draws_median_and_range_and_checks_shapes():
    steps = np.array([0, 500, 1000])
    share = {"a": np.array([[0.1, 0.3], [0.4, 0.6], [0.9, 0.7]]), "b": np.full((3, 2), 0.2)}
    ax = Figure().subplots()
    two_dimensions.draw_share_time(ax, steps, share, 5)
    medians = {line.get_label(): line.get_ydata() for line in ax.get_lines()}
    assert np.allclose(medians["a"], [0.2, 0.5, 0.8]) and np.allclose(medians["b"], 0.2)
    assert np.allclose(medians["localized above"], field_analysis.LOCALIZED_SHARE)  # the threshold, dashed
    assert ax.get_ylabel() == "box share $s_{5}$" and ax.get_ylim() == (0, 1)
    with pytest.raises(ValueError, match=r"share\['a'\] must have shape \(C, K\) with C = 3"):
        two_dimensions.draw_share_time(Figure().subplots(), steps, {"a": np.zeros((2, 2))}, 5)


def test_recorded_committee_figure_draws_its_twenty_fields():
    with matplotlib.rc_context(plotting.BOOK_STYLE):
        built = two_dimensions.fig1_committee_record()
    record = built.data
    assert record.fields.shape == (20, 900)
    visible = [ax for ax in built.figure.get_axes() if ax.get_visible() and ax.get_label() != "<colorbar>"]
    assert len(visible) == 20
    # the scale: one colour bar from -1 to 1, and the panels' extent stated
    (bar,) = [ax for ax in built.figure.get_axes() if ax.get_label() == "<colorbar>"]
    assert bar.get_ylim() == (-1.0, 1.0)
    assert "30 × 30 torus" in built.figure._supxlabel.get_text()
    # each panel is its field, scaled by its largest absolute entry
    image = np.asarray(visible[3].get_images()[0].get_array())
    field = record.fields[3] / np.max(np.abs(record.fields[3]))
    assert np.allclose(image, field.reshape(30, 30), rtol=0, atol=1e-12)


def test_comparison_widget_draws_both_fields_and_their_iprs():
    from localization import book, data, initialisation, metrics
    from localization.experiments import effective_dynamics as cmp

    task = data.family_task("NLGP", 3.0, xi=(0.3, 0.7))
    w0 = initialisation.init_weights(book.key("test", "w0"), 40, init_scale=1e-3, num=1)
    c = cmp.compare_flow_and_sgd(book.key("test", "sgd"), task, w0, lr=0.1, batch=200, steps=20, checkpoints=5)
    fig = figures.new_figure((plotting.COLUMN_WIDTH, 5.0), layout="constrained")
    axes = sgd_vs_flow.draw_comparison(fig, c, "title")
    assert set(axes) == {"sgd", "flow", "ipr"} and fig.get_suptitle() == "title"
    lines = {line.get_label(): line.get_ydata() for line in axes["ipr"].get_lines()}
    assert np.allclose(lines["SGD"], np.asarray(metrics.ipr(c.sgd.weights[0])), rtol=0, atol=1e-12)
    assert np.allclose(lines["flow"], np.asarray(metrics.ipr(c.flow.weights[0])), rtol=0, atol=1e-12)
    with pytest.raises(TypeError, match="comparison must be a Comparison"):
        sgd_vs_flow.draw_comparison(fig, {"sgd": None}, "title")


def test_mode_shares_draws_every_run_and_the_fixed_point_and_checks_shapes():
    fig = figures.new_figure((plotting.COLUMN_WIDTH, 3.0))
    times = np.linspace(0, 10, 5)
    shares = np.tile(np.array([0.9, 0.1, 0.0]), (3, 5, 1))
    final = np.full((3, 8), 0.5)
    ax1, ax2 = figures.flows.draw_mode_shares(fig.subplots(1, 2), times, shares, final, 2.0)
    assert len(ax1.get_lines()) == 2 * 3  # constant and |k| = 1 of each run
    dashed = [line for line in ax2.get_lines() if line.get_linestyle() == "--"]
    assert sorted(line.get_ydata()[0] for line in dashed) == pytest.approx([-2 / math.sqrt(8), 2 / math.sqrt(8)])
    assert "t = 10" in ax2.get_title()
    with pytest.raises(ValueError, match="shares must have the shape"):
        figures.flows.draw_mode_shares(fig.subplots(1, 2), times[:4], shares, final, 2.0)
    with pytest.raises(ValueError, match="final must have the shape"):
        figures.flows.draw_mode_shares(fig.subplots(1, 2), times, shares, final[:2], 2.0)
    with pytest.raises(ValueError, match="amplitude"):
        figures.flows.draw_mode_shares(fig.subplots(1, 2), times, shares, final, -1.0)
