"""Explorers: a figure as a function of a few controls, live in a notebook and on the static site.

A chapter writes, once::

    explore(figure, alt="The field the neuron learns, drawn at every checkpoint of training.",
            family=Choice(["NLGP", "Kur"], value="NLGP", description="data family"),
            gain=Slider([0.1, 1, 3, 10], value=3, description="gain g"),
            k=Slider([4.5, 5, 8], value=5, description="kurtosis parameter k"),
            when={"gain": {"family": "NLGP"}, "k": {"family": "Kur"}})

Each control is named in words with its symbol (``description``) and a slider shows the range of
its stops beside it ("0.1 – 10"); ``alt`` describes the picture, and the current control values are
appended to it for each frame. Every frame is :data:`localization.plotting.COLUMN_WIDTH` wide, so
that all explorers have one width, and the static frames are drawn at :data:`FRAME_SCALE` times the
book's dpi and shown at the figure's size (crisp on high-density screens).

What the reader gets depends on where the chapter runs (environment variable
:data:`STATIC_WIDGETS_ENV`):

* ``""`` / ``"0"`` (a live notebook, ``make lab``): ipywidgets controls that redraw ``figure`` at
  once, with the controls that do not apply to the current choice hidden.
* ``"frames"`` (``make book``): every applicable combination of the controls' stops is drawn at
  build time by the same ``figure`` call and embedded in the page, with a few lines of JavaScript
  that swap the picture as the reader moves a control: no kernel, no network. Controls are lists
  of stops for that reason, and the label shown is the value used. The kernel makes each figure; a
  worker process draws it (:mod:`localization.rasterise`), so making and drawing overlap on two cores.
* anything else (``"1"``: nbval and the references): nothing is drawn and no widget is created
  (nbclient's emulation of the output widget can hang a batch execution, jupyter/nbclient#312, seen
  four times in this project; and a created widget would be saved into the notebook).

``when`` says which controls apply to which choice: a control that does not apply is hidden and
keeps its default stop, so the static grid holds one frame per *applicable* combination
(:func:`frame_grid`), not the full product.
"""

from __future__ import annotations

import base64
import html
import itertools
import json
import os
import re
import time
from collections.abc import Callable, Iterator, Mapping, Sequence
from dataclasses import dataclass
from typing import Any

from localization import rasterise

__all__ = [
    "STATIC_WIDGETS_ENV",
    "FRAMES_LOG_ENV",
    "MAX_FRAMES",
    "FRAME_SCALE",
    "FRAME_COLORS",
    "MAX_ALT",
    "Control",
    "Slider",
    "Choice",
    "explore",
    "frame_grid",
    "render_frames",
    "summarize_log",
]

#: Environment variable choosing what :func:`explore` does (see the module docstring). The Makefile
#: sets "1" for every batch execution and "frames" for the book build; ``make lab`` clears it.
STATIC_WIDGETS_ENV = "LOCALIZATION_STATIC_WIDGETS"

#: Environment variable: a file to which each static explorer appends one JSON line (name, number of
#: frames, seconds, bytes) when it is built, so that the book build can report what explorers cost.
FRAMES_LOG_ENV = "LOCALIZATION_EXPLORER_LOG"

#: Most frames one explorer may embed: a page must stay light (each frame is a PNG of ~20–60 kB).
MAX_FRAMES = 64

#: Static frames are drawn at this multiple of the book's dpi (:data:`localization.plotting.FIGURE_DPI`)
#: and shown at the figure's size in CSS pixels, so that they are crisp on high-density screens.
FRAME_SCALE = 2

#: Colours of a static frame's palette (:func:`localization.rasterise.png`: maximum coverage, so a
#: small marker keeps its colour). Fewer colours saved little at twice the dpi and shifted colours
#: (64 or 128 by median cut lost a red marker); a frame at twice the dpi weighs about 1.3-1.9 times
#: a 256-colour frame at the book's dpi (measured on a line plot and a covariance image).
FRAME_COLORS = 256

#: Longest alt text (characters) :func:`explore` accepts: a description, not a caption.
MAX_ALT = 300


def _stops(name: str, stops: Sequence[Any]) -> tuple[tuple[str, ...], tuple[Any, ...]]:
    """Labels and values of a list of stops given as values or (label, value) pairs."""
    if isinstance(stops, (str, bytes)) or not isinstance(stops, Sequence) or len(stops) == 0:
        raise ValueError(f"{name} must be a non-empty list of stops (values or (label, value) pairs), got {stops!r}")
    pairs = [
        s if isinstance(s, tuple) and len(s) == 2 else (f"{s:g}" if isinstance(s, float) else str(s), s) for s in stops
    ]
    labels, values = tuple(str(label) for label, _ in pairs), tuple(value for _, value in pairs)
    if len(set(labels)) != len(labels):
        raise ValueError(f"{name}: two stops have the same label: {list(labels)}")
    return labels, values


@dataclass(frozen=True, init=False)
class Control:
    """One control: its stops (labels shown, values passed), its default stop and its description.

    Use :class:`Slider` (an ordered list of stops) or :class:`Choice` (a row of buttons).

    Parameters
    ----------
    stops : Sequence
        The values the control passes, in order, or ``(label, value)`` pairs (a float's label is
        its ``:g`` form, e.g. "0.01").
    value : Any
        The default stop (one of the values).
    description : str
        What the control is, in words with its symbol where it has one: "gain g", "kurtosis
        parameter k", "length-scale ξ₀", "data family". Shown beside the control and in the alt
        text of each frame.
    """

    value: Any
    description: str
    labels: tuple[str, ...]
    values: tuple[Any, ...]
    kind: str = "slider"

    def __init__(self, stops: Sequence[Any], value: Any, description: str):
        labels, values = _stops(type(self).__name__ + " stops", stops)
        if value not in values:
            raise ValueError(f"value {value!r} is not one of the stops {list(values)}")
        if not isinstance(description, str):
            raise TypeError(f"description must be a string, got {type(description).__name__}")
        description = " ".join(description.split())
        if not description:
            raise ValueError('description must name the control in words with its symbol, e.g. "gain g"; got ""')
        object.__setattr__(self, "value", value)
        object.__setattr__(self, "description", description)
        object.__setattr__(self, "labels", labels)
        object.__setattr__(self, "values", values)

    @property
    def default(self) -> int:
        """Index of the default stop."""
        return self.values.index(self.value)

    @property
    def range_text(self) -> str:
        """The range of a slider's stops as shown beside it ("0.01 – 100"); "" for a choice."""
        return f"{self.labels[0]} – {self.labels[-1]}" if self.kind == "slider" else ""

    def widget(self) -> Any:
        """Return the live ipywidgets control (only built in a live notebook)."""
        import ipywidgets as widgets

        options = list(zip(self.labels, self.values, strict=True))
        style = {"description_width": "initial"}  # the whole description, not cut to a few letters
        if self.kind == "slider":
            return widgets.SelectionSlider(options=options, value=self.value, description=self.description, style=style)
        return widgets.ToggleButtons(options=options, value=self.value, description=self.description, style=style)


class Slider(Control):
    """A slider over an ordered list of stops, e.g. ``Slider([0.1, 1, 3, 10], value=3, description="gain g")``.

    A stop may be a ``(label, value)`` pair. The slider shows the label of the stop it passes and,
    beside it, the range of its stops (:attr:`Control.range_text`).
    """

    kind = "slider"


class Choice(Control):
    """A choice among a few options (a row of buttons).

    For example ``Choice(["NLGP", "Kur"], value="NLGP", description="data family")``.
    """

    kind = "buttons"


def _check_when(when: Mapping[str, Mapping[str, Any]], controls: Mapping[str, Control]) -> dict:
    """``when`` as {control: {selector: set of selector values}}, validated against the controls."""
    if not isinstance(when, Mapping):
        raise TypeError(f"when must be a mapping {{control: {{selector: values}}}}, got {type(when).__name__}")
    checked = {}
    for name, conditions in when.items():
        if name not in controls:
            raise ValueError(f"when names control {name!r}, which is not one of {sorted(controls)}")
        if not isinstance(conditions, Mapping) or not conditions:
            raise TypeError(f"when[{name!r}] must be a non-empty mapping {{selector: values}}, got {conditions!r}")
        checked[name] = {}
        for selector, allowed in conditions.items():
            if selector not in controls or selector == name:
                raise ValueError(f"when[{name!r}] names selector {selector!r}, which is not another control")
            allowed = (allowed,) if isinstance(allowed, str) else tuple(allowed)
            unknown = [a for a in allowed if a not in controls[selector].values]
            if unknown:
                raise ValueError(
                    f"when[{name!r}][{selector!r}]: {unknown} are not options of {selector!r} "
                    f"({list(controls[selector].values)})"
                )
            checked[name][selector] = allowed
    return checked


def _applies(name: str, values: Mapping[str, Any], when: Mapping[str, Mapping[str, tuple]]) -> bool:
    return all(values[selector] in allowed for selector, allowed in when.get(name, {}).items())


def frame_grid(controls: Mapping[str, Control], when: Mapping[str, Mapping[str, tuple]]) -> Iterator[tuple[int, ...]]:
    """Yield the stop indices (one per control, in order) of every frame the static site needs.

    A combination is kept when every control that does not apply to it sits at its default stop, so
    each choice contributes the product of its own controls' stops only.

    Parameters
    ----------
    controls : Mapping[str, Control]
        The controls, by argument name.
    when : Mapping
        As in :func:`explore`.

    Yields
    ------
    tuple[int, ...]
        One stop index per control.
    """
    names = list(controls)
    for stops in itertools.product(*(range(len(c.values)) for c in controls.values())):
        values = {n: controls[n].values[i] for n, i in zip(names, stops, strict=True)}
        if all(_applies(n, values, when) or i == controls[n].default for n, i in zip(names, stops, strict=True)):
            yield stops


def render_frames(
    figure: Callable[..., Any],
    controls: Mapping[str, Control],
    when: Mapping[str, Mapping[str, tuple]],
    fixed: Mapping[str, Any] | None = None,
) -> dict[str, str]:
    """Draw ``figure(**fixed, **values)`` for every stop combination of :func:`frame_grid`.

    ``figure`` must return a Matplotlib figure, which is closed after it is encoded.

    Parameters
    ----------
    figure : Callable
        As in :func:`explore`.
    controls : Mapping[str, Control]
        The controls, by argument name.
    when : Mapping
        As in :func:`explore`.
    fixed : Mapping or None
        The arguments that are not controls.

    Returns
    -------
    dict[str, str]
        Frame key (the stop indices joined by "-") → PNG data URI, drawn at :data:`FRAME_SCALE`
        times the book's dpi in a palette of :data:`FRAME_COLORS` colours.
    """
    return _render(figure, controls, when, fixed)[0]


def _check_width(fig: Any, values: Mapping[str, Any]) -> None:
    """Raise ValueError unless ``fig`` is the column's width (one width for every explorer)."""
    from localization import plotting

    if abs(fig.get_figwidth() - plotting.COLUMN_WIDTH) > 1e-3:
        raise ValueError(
            f"figure is {fig.get_figwidth():g} in wide for {dict(values)}: every explorer's figure is "
            f"plotting.COLUMN_WIDTH = {plotting.COLUMN_WIDTH:g} in wide, so that all explorers have one width"
        )


def _render(figure, controls, when, fixed=None) -> tuple[dict[str, str], float]:
    """Run :func:`render_frames`, drawn by :class:`localization.rasterise.FrameDrawer`.

    Drawing happens in a worker process where possible; also returns the CPU seconds the workers spent.
    """
    import matplotlib.pyplot as plt

    from localization import plotting

    grid = list(frame_grid(controls, when))
    if len(grid) > MAX_FRAMES:
        raise ValueError(
            f"the explorer needs {len(grid)} frames, more than MAX_FRAMES = {MAX_FRAMES}: use fewer stops "
            f"or restrict controls with `when`"
        )
    names = list(controls)
    drawer = rasterise.FrameDrawer(dpi=plotting.FIGURE_DPI * FRAME_SCALE, colors=FRAME_COLORS)
    for stops in grid:
        values = {n: controls[n].values[i] for n, i in zip(names, stops, strict=True)}
        fig = figure(**(fixed or {}), **values)
        if not hasattr(fig, "savefig"):
            raise TypeError(f"figure must return a Matplotlib figure, got {type(fig).__name__} for {values}")
        try:
            _check_width(fig, values)
        except ValueError:
            plt.close(fig)
            raise
        drawer.add(fig)
        plt.close(fig)
    keys = ["-".join(map(str, stops)) for stops in grid]
    pictures = drawer.finish()
    frames = {k: "data:image/png;base64," + base64.b64encode(p).decode() for k, p in zip(keys, pictures, strict=True)}
    return frames, drawer.worker_cpu_seconds


_SCRIPT = """
(function () {
  const root = document.getElementById(%(id)s);
  const spec = JSON.parse(root.querySelector('script[type="application/json"]').textContent);
  const img = root.querySelector('img'), caption = root.querySelector('.loc-explorer-values');
  const state = spec.controls.map((c) => c.default);
  const applies = (c) => Object.entries(c.when).every(([s, ok]) =>
    ok.includes(spec.controls[spec.names.indexOf(s)].values[state[spec.names.indexOf(s)]]));
  function update() {
    const shown = [];
    spec.controls.forEach((c, i) => {
      const box = root.querySelector('[data-control="' + c.name + '"]');
      const on = applies(c);
      box.hidden = !on;
      if (!on) state[i] = c.default;
      if (c.kind === 'slider') {
        const input = box.querySelector('input');
        input.value = state[i];
        input.setAttribute('aria-valuetext', c.labels[state[i]]);
        box.querySelector('output').textContent = c.labels[state[i]];
      } else {
        box.querySelectorAll('button').forEach((b, j) => b.setAttribute('aria-pressed', j === state[i]));
      }
      if (on) shown.push(c.description + ' = ' + c.labels[state[i]]);
    });
    img.src = spec.frames[state.join('-')];
    img.alt = spec.alt + ' Settings: ' + shown.join(', ') + '.';
    caption.textContent = shown.join(', ');
  }
  spec.controls.forEach((c, i) => {
    const box = root.querySelector('[data-control="' + c.name + '"]');
    if (c.kind === 'slider') {
      box.querySelector('input').addEventListener('input', (e) => { state[i] = +e.target.value; update(); });
    } else {
      box.querySelectorAll('button').forEach((b, j) => b.addEventListener('click', () => { state[i] = j; update(); }));
    }
  });
  update();
})();
"""

# One layout for every explorer: the box is the column's width (the site's book.css sets the same)
# and every frame is COLUMN_WIDTH wide; each control is a row of four columns (name, slider, value,
# range) of fixed widths, so the sliders of all explorers line up; below 600 px the name takes its
# own line.
_STYLE = """<style>
.loc-explorer { box-sizing: border-box; width: 100%; border: 1px solid #d0d7de;
  border-radius: 6px; padding: 10px; margin: 0.5em 0; }
.loc-explorer-controls { display: grid; gap: 0.4em; }
.loc-explorer-control { display: grid; grid-template-columns: 12em minmax(6em, 1fr) 4.5em 7.5em;
  gap: 0.3em 0.8em; align-items: center; margin: 0; }
.loc-explorer-control[hidden] { display: none; }
.loc-explorer-control input[type=range] { width: 100%; margin: 0; }
.loc-explorer-control output { font-variant-numeric: tabular-nums; font-weight: 600; }
.loc-explorer-range { font-size: 0.85em; color: #57606a; font-variant-numeric: tabular-nums;
  white-space: nowrap; }
.loc-explorer-buttons { grid-column: 2 / -1; display: flex; flex-wrap: wrap; gap: 0.3em; }
.loc-explorer-buttons button { border: 1px solid #8c959f; background: #fff; color: #24292f;
  border-radius: 4px; padding: 0.15em 0.6em; cursor: pointer; }
.loc-explorer-buttons button[aria-pressed=true] { background: #24292f; color: #fff; }
.loc-explorer img { display: block; max-width: 100%; height: auto; margin-top: 0.5em; }
.loc-explorer-values { font-size: 0.9em; color: #57606a; margin: 0.2em 0 0 0; }
@media (max-width: 600px) {
  .loc-explorer-control { grid-template-columns: minmax(6em, 1fr) auto auto; }
  .loc-explorer-control > :first-child, .loc-explorer-buttons { grid-column: 1 / -1; }
}
</style>"""


def _settings(controls: Mapping[str, Control], when: Mapping, stops: Sequence[int]) -> list[str]:
    """Return ``description = label`` of every control that applies at these stop indices."""
    values = {n: c.values[i] for (n, c), i in zip(controls.items(), stops, strict=True)}
    return [
        f"{c.description} = {c.labels[i]}"
        for (n, c), i in zip(controls.items(), stops, strict=True)
        if _applies(n, values, when)
    ]


def _alt_text(alt: str, settings: Sequence[str]) -> str:
    """Return the alt text of one frame: the description of the picture, then the control values shown."""
    return f"{alt} Settings: {', '.join(settings)}."


def _css_size(data_uri: str) -> tuple[int, int]:
    """Return the CSS size (width, height in px) at which a frame is shown: its pixels over FRAME_SCALE."""
    header = base64.b64decode(data_uri.split(",", 1)[1][:32])  # 24 bytes: signature and IHDR size
    width, height = int.from_bytes(header[16:20], "big"), int.from_bytes(header[20:24], "big")
    return int(width / FRAME_SCALE + 0.5), int(height / FRAME_SCALE + 0.5)


def _static_html(ident: str, alt: str, controls: Mapping[str, Control], when: Mapping, frames: dict) -> str:
    """Return the explorer as self-contained HTML: controls, the default frame, the frames as JSON, the script."""
    parts, specs = [], []
    for key, c in controls.items():
        label, cid = html.escape(c.description), f"{ident}-{html.escape(key)}"
        if c.kind == "slider":
            stops = html.escape(", ".join(c.labels))
            parts.append(
                f'<div class="loc-explorer-control" data-control="{html.escape(key)}">'
                f'<label for="{cid}">{label}</label><input id="{cid}" type="range" min="0" '
                f'max="{len(c.values) - 1}" step="1" value="{c.default}" '
                f'aria-valuetext="{html.escape(c.labels[c.default])}">'
                f'<output for="{cid}">{html.escape(c.labels[c.default])}</output>'
                f'<span class="loc-explorer-range" title="stops: {stops}">{html.escape(c.range_text)}</span></div>'
            )
        else:
            buttons = "".join(
                f'<button type="button" aria-pressed="{str(j == c.default).lower()}">{html.escape(text)}</button>'
                for j, text in enumerate(c.labels)
            )
            parts.append(
                f'<div class="loc-explorer-control" data-control="{html.escape(key)}" role="group" '
                f'aria-labelledby="{cid}"><span id="{cid}">{label}</span>'
                f'<span class="loc-explorer-buttons">{buttons}</span></div>'
            )
        specs.append(
            {
                "name": key,
                "description": c.description,
                "kind": c.kind,
                "labels": list(c.labels),
                "range": c.range_text,
                "values": [v if isinstance(v, (str, int, float)) else str(v) for v in c.values],
                "default": c.default,
                "when": {s: list(allowed) for s, allowed in when.get(key, {}).items()},
            }
        )
    spec = {"names": list(controls), "alt": alt, "controls": specs, "frames": frames}
    default_stops = tuple(c.default for c in controls.values())
    default = frames["-".join(map(str, default_stops))]
    width, height = _css_size(default)
    # "</" cannot appear inside a <script> element; JSON allows the escaped form.
    payload = json.dumps(spec, separators=(",", ":")).replace("</", "<\\/")
    return (
        f'{_STYLE}<div class="loc-explorer" id="{ident}">'
        f'<div class="loc-explorer-controls">{"".join(parts)}</div>'
        f'<img src="{default}" width="{width}" height="{height}" '
        f'alt="{html.escape(_alt_text(alt, _settings(controls, when, default_stops)))}">'
        f'<p class="loc-explorer-values">{html.escape(", ".join(_settings(controls, when, default_stops)))}</p>'
        f'<script type="application/json">{payload}</script>'
        f"<script>{_SCRIPT % {'id': json.dumps(ident)}}</script></div>"
    )


_counter = itertools.count()


def _check_alt(alt: Any) -> str:
    """``alt`` with its spaces collapsed and a final full stop; TypeError/ValueError when it is no description."""
    if not isinstance(alt, str):
        raise TypeError(f"alt must be a string describing what the figure shows, got {type(alt).__name__}")
    alt = " ".join(alt.split())
    if len(alt.split()) < 4:
        raise ValueError(
            f"alt must be a sentence describing what the figure shows (the control values are appended), got {alt!r}"
        )
    if len(alt) > MAX_ALT:
        raise ValueError(
            f"alt must be at most MAX_ALT = {MAX_ALT} characters (a description, not a caption), got {len(alt)}"
        )
    return alt if alt[-1] in ".!?" else alt + "."


def explore(
    figure: Callable[..., Any],
    /,
    *,
    alt: str,
    when: Mapping[str, Mapping[str, Any]] | None = None,
    **arguments: Any,
) -> None:
    """Show ``figure(**values)`` under controls; see the module docstring for the three modes.

    Parameters
    ----------
    figure : Callable
        Returns a Matplotlib figure (not shown, not closed) for keyword values of its arguments,
        :data:`localization.plotting.COLUMN_WIDTH` wide (a figure of another width is refused:
        every explorer has one width).
    alt : str
        The alt text of the picture: a sentence (at least four words, at most :data:`MAX_ALT`
        characters) saying what the figure shows, e.g. "Weights of the learned field against
        position, one curve per checkpoint of training, lighter early and darker late." Each
        frame's alt text is this sentence followed by the values of the controls shown
        ("Settings: gain g = 3.").
    when : Mapping or None
        ``{control: {selector: allowed values}}``: show ``control`` only while each ``selector``
        holds one of its allowed values; otherwise it keeps its default.
    **arguments
        Keyword arguments of ``figure``: a :class:`Slider` or :class:`Choice` is a control; any
        other value is passed as it is.

    Returns
    -------
    None
        The explorer is displayed, never returned: a returned value would be shown a second time as
        the cell's value (the page's HTML printed as text under the explorer, or the widget twice).
    """
    from IPython.display import HTML, display

    if not callable(figure):
        raise TypeError(f"figure must be callable, got {figure!r}")
    alt = _check_alt(alt)
    controls = {n: c for n, c in arguments.items() if isinstance(c, Control)}
    fixed = {n: c for n, c in arguments.items() if not isinstance(c, Control)}
    if not controls:
        raise ValueError("explore needs at least one control (explorer.Slider or explorer.Choice)")
    for n, c in fixed.items():
        if type(c).__module__.startswith("ipywidgets"):
            raise TypeError(f"argument {n!r} is an ipywidgets object: use explorer.Slider or explorer.Choice")
    checked = _check_when(when or {}, controls)
    mode = os.environ.get(STATIC_WIDGETS_ENV, "")
    name = getattr(figure, "__name__", "explorer")

    if mode == "frames":
        start, cpu = time.perf_counter(), time.process_time()
        frames, worker_cpu = _render(figure, controls, checked, fixed)
        ident = f"loc-explorer-{re.sub(r'[^A-Za-z0-9_-]', '', name)}-{next(_counter)}"
        page = _static_html(ident, alt, controls, checked, frames)
        log = os.environ.get(FRAMES_LOG_ENV)
        if log:
            # CPU time too: on a shared machine the wall time measures the load as much as the work.
            record = {
                "name": name,
                "frames": len(frames),
                "seconds": time.perf_counter() - start,
                "cpu_seconds": time.process_time() - cpu + worker_cpu,
                "workers": rasterise.worker_count(),
                "bytes": len(page),
            }
            with open(log, "a", encoding="utf-8") as f:
                f.write(json.dumps(record) + "\n")
        display(HTML(page))
        return None
    if mode not in ("", "0"):
        return None  # batch execution: no widget is created, so none is saved in the notebook

    import ipywidgets as widgets
    import matplotlib.pyplot as plt

    live = {n: c.widget() for n, c in controls.items()}
    # A slider's row holds the slider and the range of its stops; a row is hidden as a whole.
    rows = {
        n: widgets.HBox([w, widgets.Label(controls[n].range_text)]) if controls[n].kind == "slider" else w
        for n, w in live.items()
    }
    out = widgets.Output()

    def redraw(_change=None):
        values = {n: w.value for n, w in live.items()}
        for n, row in rows.items():
            row.layout.display = None if _applies(n, values, checked) else "none"
        with out:
            out.clear_output(wait=True)
            fig = figure(**fixed, **values)
            try:
                _check_width(fig, values)
                display(fig)
            finally:
                plt.close(fig)

    for w in live.values():
        w.observe(redraw, names="value")
    box = widgets.VBox([*rows.values(), out])
    display(box)
    redraw()
    return None


def summarize_log(path: str) -> str:
    """Return one line per explorer built (from the :data:`FRAMES_LOG_ENV` file) and their total.

    Parameters
    ----------
    path : str
        The log file.

    Returns
    -------
    str
        The summary.
    """
    try:
        with open(path, encoding="utf-8") as f:
            records = [json.loads(line) for line in f if line.strip()]
    except FileNotFoundError:
        return "explorers: none built in this run (every chapter came from the execution cache)"
    lines = [
        f"  {r['name']:<24} {r['frames']:3d} frames {r['seconds']:6.1f} s (CPU {r.get('cpu_seconds', 0):6.1f} s) "
        f"{r['bytes'] / 1e6:5.2f} MB"
        for r in records
    ]
    total = sum(r["seconds"] for r in records)
    cpu = sum(r.get("cpu_seconds", 0) for r in records)
    frames = sum(r["frames"] for r in records)
    size = sum(r["bytes"] for r in records) / 1e6
    return "\n".join(
        [
            "explorers built in this run:",
            *lines,
            f"  total: {frames} frames in {total:.1f} s (CPU {cpu:.1f} s), {size:.2f} MB",
        ]
    )


if __name__ == "__main__":
    import sys

    print(summarize_log(sys.argv[1]))
