"""The hypercube chapter's library identities (moved out of book/hypercube.md) and its back-end.

The chapter keeps the checks of the notes' statements; tested here: the library's dominant closed form
against enumeration, the traceable Gaussian threshold mean the chapter differentiates against the
library's, and :func:`localization.experiments.hypercube.endpoint_census`, :func:`settled_shape` and
the drawing functions (shapes, argument validation).
"""

import jax
import jax.numpy as jnp
import matplotlib
import numpy as np
import pytest

from localization.data import spectral
from localization.experiments import hypercube as hx
from localization.figures import hypercube as hc_fig
from localization.theory import gaussian as gf
from localization.theory import hypercube as hc
from localization.theory import hypercube_laws as hl

matplotlib.use("Agg")


@pytest.mark.parametrize("law", [hl.uniform_law(8), hl.ising_ring_law(0.5, 8)])
def test_dominant_closed_form_is_the_enumerated_threshold_mean(law):
    for idx in [(0, 1, 2), (0, 3, 5), (7, 2, 4)]:
        w = np.zeros(8)
        w[list(idx)] = (2.0, -0.7, 0.2)
        np.testing.assert_allclose(hc.dominant_closed_form(w, law), hc.threshold_mean(w, law), atol=1e-12)


def test_traceable_gaussian_threshold_mean_is_the_library_closed_form():
    cov = spectral.covariance(2.0, 3)
    w = np.array([1.0, 0.6, -0.3])
    f = cov @ jnp.asarray(w) / jnp.sqrt(2 * jnp.pi * w @ cov @ w)
    np.testing.assert_allclose(f, gf.half_space_moment(w, cov), atol=1e-12)


def _ising_endpoints():
    """Exact Ising laws on a ring of 8 and endpoints near the shifted, signed localized fixed point."""
    law = hx.task_laws("Ising", 0.7, 8)
    s0, s1 = law.covariances()
    w_loc = np.linalg.solve(s0 + s1, s1[:, 0])
    noise = 1e-6 * np.asarray(jax.random.normal(jax.random.key(0), (4, 8)))
    ends = np.stack([s * np.roll(w_loc, k) for k, s in [(0, 1), (3, -1), (5, 1), (6, -1)]]) + noise
    return law, ends


def test_endpoint_census_and_settled_shape_on_exact_ising_laws():
    law, ends = _ising_endpoints()
    census = hx.endpoint_census(law, ends, ends)
    s0, s1 = law.covariances()
    np.testing.assert_allclose(census.w_loc, np.linalg.solve(s0 + s1, s1[:, 0]), atol=1e-12)
    assert census.loc_converged and census.loc_residual < 1e-12
    assert census.converged == census.iterations == 1 + 2 * len(ends)
    assert census.stability < 1e-12 and census.s_half_min_eig > 0 and census.tie > 0
    assert census.flow_gap < 1e-4 and np.all(census.dist_sgd < 1e-4)
    assert census.loc_flow.all() and census.loc_sgd.all()
    shape = hx.settled_shape(census, ends, ends)
    assert shape.peaks == len(ends) and shape.other_flow == shape.other_sgd == shape.other_narrow == 0
    assert shape.corr_min > 1 - 1e-6 and shape.ipr_gap < 1e-4 and shape.sign_bad == 0


def test_census_and_shape_name_bad_arguments():
    law, ends = _ising_endpoints()
    with pytest.raises(TypeError, match="law"):
        hx.endpoint_census("Ising", ends, ends)
    with pytest.raises(ValueError, match="w_flow"):
        hx.endpoint_census(law, ends[:, :5], ends)
    with pytest.raises(TypeError, match="census"):
        hx.settled_shape(None, ends, ends)
    census = hx.endpoint_census(law, ends, ends)
    with pytest.raises(ValueError, match="near"):
        hx.settled_shape(census, ends, ends, near=-1.0)
    far = census._replace(dist_sgd=np.ones(len(ends)))
    with pytest.raises(ValueError, match="settled"):
        hx.settled_shape(far, ends, ends)


def test_drawing_functions():
    from matplotlib.figure import Figure

    ns = np.arange(3, 7)
    fig = hc_fig.draw_argmax_fractions(ns, {"dominance": np.ones(4) / 2, "iid signs": np.ones(4)})
    assert isinstance(fig, Figure)
    with pytest.raises(ValueError, match="fractions"):
        hc_fig.draw_argmax_fractions(ns, {"dominance": np.ones(3)})
    w = np.array([0.1, -0.2, 1.0, -3.0, 0.5, 0.0])
    centred = hc_fig.centre_peak(w)
    assert centred[3] == 3.0 and np.isclose(np.abs(centred).sum(), np.abs(w).sum())
    with pytest.raises(ValueError, match="w"):
        hc_fig.centre_peak(np.ones((2, 3)))
    ends = np.ones((2, 12))
    fig = hc_fig.draw_flow_fields({"a": (ends, ends, ends[0]), "b": (ends, ends, ends[0])}, t_end=50.0)
    assert len(fig.axes) == 2
    with pytest.raises(ValueError, match="t_end"):
        hc_fig.draw_flow_fields({"a": (ends, ends, ends[0])}, t_end=0.0)
    matplotlib.pyplot.close("all")
