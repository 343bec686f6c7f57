"""A static explorer's page: its controls as HTML, the frames as JSON and the script that swaps them.

Self-contained (its own style and script, no widget manager): the book build embeds it in the page,
so moving a control swaps the picture with no kernel and no network (:func:`static_html`).
"""

from __future__ import annotations

import base64
import html
import json
from collections.abc import Mapping, Sequence

from localization.book.explorer_controls import Control, applies

__all__ = ["FRAME_SCALE", "static_html", "_frame_alt", "_settings_shown"]

#: Static frames are drawn at this multiple of the book's dpi (:data:`localization.plotting.FIGURE_DPI`)
#: and shown at the figure's size in CSS pixels, so that they are crisp on high-density screens.
FRAME_SCALE = 2


_SCRIPT = """
(function () {
  const root = document.getElementById(%(id)s);
  const spec = JSON.parse(root.querySelector('script[type="application/json"]').textContent);
  const img = root.querySelector('img'), caption = root.querySelector('.loc-explorer-values');
  const state = spec.controls.map((c) => c.default);
  const applies = (c) => Object.entries(c.when).every(([s, ok]) =>
    ok.includes(spec.controls[spec.names.indexOf(s)].values[state[spec.names.indexOf(s)]]));
  // The site moves the frames to a script file of their own (data-frames, _ext/explorer_frames.py),
  // loaded when the reader first moves a control: the page stays light. A <script> loads offline too.
  let loading = null;
  root.locSpec = spec;
  root.locLoad = () => {
    if (spec.frames) return Promise.resolve(spec);
    loading = loading || new Promise((resolve, reject) => {
      const tag = document.createElement('script');
      tag.src = root.dataset.frames;
      tag.onload = () => { spec.frames = window.locExplorerFrames[root.id]; resolve(spec); };
      tag.onerror = () => reject(new Error('explorer frames not found: ' + tag.src));
      document.head.appendChild(tag);
    });
    return loading;
  };
  function render() {
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
    caption.textContent = shown.join(', ');
    return shown;
  }
  function update() {
    const shown = render(), stops = state.join('-');
    root.locReady = root.locLoad().then(() => {
      if (state.join('-') !== stops) return;  // a later move owns the picture
      img.src = spec.frames[stops];
      img.alt = spec.alt + ' Settings: ' + shown.join(', ') + '.';
    });
  }
  spec.controls.forEach((c, i) => {
    const box = root.querySelector('[data-control="' + c.name + '"]');
    if (c.kind === 'slider') {
      box.querySelector('input').addEventListener('input', (e) => { state[i] = +e.target.value; update(); });
    } else {
      box.querySelectorAll('button').forEach((b, j) => b.addEventListener('click', () => { state[i] = j; update(); }));
    }
  });
  render();
  root.locReady = Promise.resolve();
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


def _settings_shown(controls: Mapping[str, Control], when: Mapping, stops: Sequence[int]) -> list[str]:
    """Return ``description = label`` of every control that applies at these stop indices."""
    values = {n: c.values[i] for (n, c), i in zip(controls.items(), stops, strict=True)}
    return [
        f"{c.description} = {c.labels[i]}"
        for (n, c), i in zip(controls.items(), stops, strict=True)
        if applies(n, values, when)
    ]


def _frame_alt(alt: str, settings: Sequence[str]) -> str:
    """Return the alt text of one frame: the description of the picture, then the control values shown."""
    return f"{alt} Settings: {', '.join(settings)}."


def _css_size(data_uri: str) -> tuple[int, int]:
    """Return the CSS size (width, height in px) at which a frame is shown: its pixels over FRAME_SCALE."""
    header = base64.b64decode(data_uri.split(",", 1)[1][:32])  # 24 bytes: signature and IHDR size
    width, height = int.from_bytes(header[16:20], "big"), int.from_bytes(header[20:24], "big")
    return int(width / FRAME_SCALE + 0.5), int(height / FRAME_SCALE + 0.5)


def static_html(ident: str, alt: str, controls: Mapping[str, Control], when: Mapping, frames: dict) -> str:
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
        f'alt="{html.escape(_frame_alt(alt, _settings_shown(controls, when, default_stops)))}">'
        f'<p class="loc-explorer-values">{html.escape(", ".join(_settings_shown(controls, when, default_stops)))}</p>'
        f'<script type="application/json">{payload}</script>'
        f"<script>{_SCRIPT % {'id': json.dumps(ident)}}</script></div>"
    )
