"""Explorers: a figure as a function of a few controls, live in a notebook and on the static site.

A chapter writes, once::

    explore(figure, family=Choice(["NLGP", "Kur"], value="NLGP"),
            gain=Slider([0.1, 1, 3, 10], value=3, description="gain g"),
            k=Slider([4.5, 5, 8], value=5, description="k"),
            when={"gain": {"family": "NLGP"}, "k": {"family": "Kur"}})

and what the reader gets depends on where the chapter runs (environment variable
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

#: Most frames one explorer may embed: a page must stay light (each frame is a PNG of ~10–40 kB).
MAX_FRAMES = 64


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
    """

    value: Any
    description: str
    labels: tuple[str, ...]
    values: tuple[Any, ...]
    kind: str = "slider"

    def __init__(self, stops: Sequence[Any], value: Any, description: str = ""):
        labels, values = _stops(type(self).__name__ + " stops", stops)
        if value not in values:
            raise ValueError(f"value {value!r} is not one of the stops {list(values)}")
        if not isinstance(description, str):
            raise TypeError(f"description must be a string, got {type(description).__name__}")
        object.__setattr__(self, "value", value)
        object.__setattr__(self, "description", description)
        object.__setattr__(self, "labels", labels)
        object.__setattr__(self, "values", values)

    @property
    def default(self) -> int:
        """Index of the default stop."""
        return self.values.index(self.value)

    def widget(self, name: str) -> Any:
        """Return the live ipywidgets control (only built in a live notebook)."""
        import ipywidgets as widgets

        options = list(zip(self.labels, self.values, strict=True))
        if self.kind == "slider":
            return widgets.SelectionSlider(options=options, value=self.value, description=self.description or name)
        return widgets.ToggleButtons(options=options, value=self.value, description=self.description or name)


class Slider(Control):
    """A slider over an ordered list of stops, e.g. ``Slider([0.1, 1, 3, 10], value=3, description="gain g")``.

    A stop may be a ``(label, value)`` pair. The slider shows the label of the stop it passes.
    """

    kind = "slider"


class Choice(Control):
    """A choice among a few options (a row of buttons), e.g. ``Choice(["NLGP", "Kur"], value="NLGP")``."""

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
        Frame key (the stop indices joined by "-") → PNG data URI.
    """
    return _render(figure, controls, when, fixed)[0]


def _render(figure, controls, when, fixed=None) -> tuple[dict[str, str], float]:
    """Run :func:`render_frames`, drawn by :class:`localization.rasterise.FrameDrawer`.

    Drawing happens in a worker process where possible; also returns the CPU seconds the workers spent.
    """
    import matplotlib.pyplot as plt

    grid = list(frame_grid(controls, when))
    if len(grid) > MAX_FRAMES:
        raise ValueError(
            f"the explorer needs {len(grid)} frames, more than MAX_FRAMES = {MAX_FRAMES}: use fewer stops "
            f"or restrict controls with `when`"
        )
    names = list(controls)
    drawer = rasterise.FrameDrawer()
    for stops in grid:
        values = {n: controls[n].values[i] for n, i in zip(names, stops, strict=True)}
        fig = figure(**(fixed or {}), **values)
        if not hasattr(fig, "savefig"):
            raise TypeError(f"figure must return a Matplotlib figure, got {type(fig).__name__} for {values}")
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
        box.querySelector('input').value = state[i];
        box.querySelector('output').textContent = c.labels[state[i]];
      } else {
        box.querySelectorAll('button').forEach((b, j) => b.setAttribute('aria-pressed', j === state[i]));
      }
      if (on) shown.push(c.description + ' = ' + c.labels[state[i]]);
    });
    img.src = spec.frames[state.join('-')];
    img.alt = spec.alt + ': ' + shown.join(', ');
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

_STYLE = """<style>
.loc-explorer { border: 1px solid #d0d7de; border-radius: 6px; padding: 0.6em; margin: 0.5em 0; }
.loc-explorer-controls { display: flex; flex-wrap: wrap; gap: 0.4em 1.5em; align-items: center; }
.loc-explorer-controls label, .loc-explorer-controls fieldset { display: flex; gap: 0.5em;
  align-items: center; border: 0; margin: 0; padding: 0; }
.loc-explorer-controls [hidden] { display: none; }
.loc-explorer-controls input[type=range] { width: 11em; }
.loc-explorer-controls output { min-width: 3em; font-variant-numeric: tabular-nums; font-weight: 600; }
.loc-explorer-controls button { border: 1px solid #8c959f; background: #fff; border-radius: 4px;
  padding: 0.15em 0.6em; cursor: pointer; }
.loc-explorer-controls button[aria-pressed=true] { background: #24292f; color: #fff; }
.loc-explorer img { max-width: 100%; height: auto; display: block; margin-top: 0.4em; }
.loc-explorer-values { font-size: 0.9em; color: #57606a; margin: 0.2em 0 0 0; }
</style>"""


def _static_html(ident: str, name: str, controls: Mapping[str, Control], when: Mapping, frames: dict) -> str:
    """Return the explorer as self-contained HTML: controls, the default frame, the frames as JSON, the script."""
    parts, specs = [], []
    for key, c in controls.items():
        label = html.escape(c.description or key)
        if c.kind == "slider":
            parts.append(
                f'<label data-control="{html.escape(key)}">{label} <input type="range" min="0" '
                f'max="{len(c.values) - 1}" step="1" value="{c.default}" aria-label="{label}">'
                f"<output>{html.escape(c.labels[c.default])}</output></label>"
            )
        else:
            buttons = "".join(
                f'<button type="button" aria-pressed="{str(j == c.default).lower()}">{html.escape(text)}</button>'
                for j, text in enumerate(c.labels)
            )
            parts.append(
                f'<fieldset data-control="{html.escape(key)}" role="group" aria-label="{label}">'
                f"<span>{label}</span>{buttons}</fieldset>"
            )
        specs.append(
            {
                "name": key,
                "description": c.description or key,
                "kind": c.kind,
                "labels": list(c.labels),
                "values": [v if isinstance(v, (str, int, float)) else str(v) for v in c.values],
                "default": c.default,
                "when": {s: list(allowed) for s, allowed in when.get(key, {}).items()},
            }
        )
    spec = {"names": list(controls), "alt": f"explorer {name}", "controls": specs, "frames": frames}
    default = "-".join(str(c.default) for c in controls.values())
    # "</" cannot appear inside a <script> element; JSON allows the escaped form.
    payload = json.dumps(spec, separators=(",", ":")).replace("</", "<\\/")
    return (
        f'{_STYLE}<div class="loc-explorer" id="{ident}"><div class="loc-explorer-controls">{"".join(parts)}</div>'
        f'<img src="{frames[default]}" alt="explorer {html.escape(name)}">'
        f'<p class="loc-explorer-values"></p>'
        f'<script type="application/json">{payload}</script>'
        f"<script>{_SCRIPT % {'id': json.dumps(ident)}}</script></div>"
    )


_counter = itertools.count()


def explore(figure: Callable[..., Any], /, *, when: Mapping[str, Mapping[str, Any]] | None = None, **arguments: Any):
    """Show ``figure(**values)`` under controls; see the module docstring for the three modes.

    Parameters
    ----------
    figure : Callable
        Returns a Matplotlib figure (not shown, not closed) for keyword values of its arguments.
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
        page = _static_html(ident, name, controls, checked, frames)
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

    live = {n: c.widget(n) for n, c in controls.items()}
    out = widgets.Output()

    def redraw(_change=None):
        values = {n: w.value for n, w in live.items()}
        for n, w in live.items():
            w.layout.display = None if _applies(n, values, checked) else "none"
        with out:
            out.clear_output(wait=True)
            fig = figure(**fixed, **values)
            display(fig)
            plt.close(fig)

    for w in live.values():
        w.observe(redraw, names="value")
    box = widgets.VBox([*live.values(), out])
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
