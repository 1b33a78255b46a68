"""The interactive figure for the web: one self-contained HTML file (no network, no external script)
that draws the heatmap and keeps the window's hover: a word's row shows where it looks, its column
who looks at it, with its strongest weights written out; a click pins the word. The rows and columns
may be two texts' tokens (cross-attention: the target's rows read the source's columns).

Small on purpose: the one matrix shown, as 16-bit numbers (two bytes a cell, base64), and a short
script; BertViz's head view needs Jupyter and a CDN and weighed 53 MB at 128 tokens. A content
security policy forbids the page any request at all. No Qt here.
"""

from __future__ import annotations

import base64
import html
import json

import numpy as np

MASKED = 65535  # the code of a masked cell; values are 0 … 65534 between the levels
HIGHLIGHT = "#D6336C"
HIGHLIGHT_ON_DARK = "#FF6B35"
POLICY = "default-src 'none'; script-src 'unsafe-inline'; style-src 'unsafe-inline'; img-src data:"


def encoded_values(matrix: np.ndarray, mask: np.ndarray | None, levels: tuple[float, float]) -> str:
    """The matrix as little-endian 16-bit codes between `levels` (masked and non-finite cells: MASKED)."""
    low, high = levels
    hidden = ~np.isfinite(matrix) if mask is None else (~np.isfinite(matrix) | mask)
    span = (high - low) or 1.0
    codes = np.clip(np.round((np.nan_to_num(matrix, nan=low, posinf=high, neginf=low) - low) / span * (MASKED - 1)),
                    0, MASKED - 1).astype("<u2")
    codes[hidden] = MASKED
    return base64.b64encode(codes.tobytes()).decode("ascii")


def html_page(*, labels: list[str], matrix: np.ndarray, mask: np.ndarray | None, levels: tuple[float, float],
              span: str, colours: np.ndarray, title: str, caption: str, heading: str, percent: bool,
              background: str, foreground: str, dark: bool, key_labels: list[str] | None = None,
              axis_titles: tuple[str, str] = ("word looking", "word looked at")) -> str:
    """The page. `labels` name the rows, `key_labels` the columns when they are another text's tokens
    (else the rows' own); `axis_titles` say what rows and columns are. `colours`: 256 × 3 bytes of the
    colour map; `span`: "fixed", "data" or "row" (colours over each row's largest); `percent`: values
    read out as percentages (weights)."""
    columns = list(labels if key_labels is None else key_labels)
    if np.shape(matrix) != (len(labels), len(columns)):
        raise ValueError(f"a {np.shape(matrix)} matrix with {len(labels)} row and {len(columns)} column labels")
    data = {"labels": list(labels), "keyLabels": columns, "n": len(labels), "nKeys": len(columns),
            "oneText": key_labels is None, "low": float(levels[0]), "high": float(levels[1]), "axes": list(axis_titles),
            "span": span, "percent": percent, "heading": heading,
            "values": encoded_values(np.asarray(matrix, dtype=np.float64), mask, levels),
            "colours": base64.b64encode(np.asarray(colours, dtype=np.uint8).tobytes()).decode("ascii"),
            "highlight": HIGHLIGHT_ON_DARK if dark else HIGHLIGHT, "ink": foreground,
            "background": background or "transparent"}
    script = _SCRIPT.replace("__DATA__", json.dumps(data, ensure_ascii=True).replace("</", "<\\/"))
    return _PAGE.format(policy=POLICY, title=html.escape(title or heading), heading=html.escape(title or heading),
                        caption=html.escape(caption), background=background or "transparent", ink=foreground,
                        axes=html.escape(f"rows: {axis_titles[0]} · columns: {axis_titles[1]}"),
                        script=script)


_PAGE = """<!DOCTYPE html>
<html lang="en">
<head>
<meta charset="utf-8">
<meta http-equiv="Content-Security-Policy" content="{policy}">
<meta name="viewport" content="width=device-width, initial-scale=1">
<title>{title}</title>
<style>
body {{ margin: 16px; background: {background}; color: {ink};
       font-family: 'DejaVu Sans', 'Helvetica Neue', Helvetica, Arial, sans-serif; }}
h1 {{ font-size: 16px; margin: 0 0 8px 0; }}
#readout {{ font-size: 13px; min-height: 2.6em; margin: 6px 0; }}
#axes {{ font-size: 12px; margin: 0 0 6px 0; opacity: 0.85; }}
#caption {{ font-size: 11px; max-width: 900px; opacity: 0.85; }}
canvas {{ display: block; cursor: crosshair; }}
</style>
</head>
<body>
<h1>{heading}</h1>
<p id="axes">{axes}</p>
<canvas id="heatmap"></canvas>
<div id="readout">Hover a word (or a cell) to see where it looks; click to keep it.</div>
<p id="caption">{caption}</p>
<script>
{script}
</script>
</body>
</html>
"""

_SCRIPT = r"""
"use strict";
(function () {
  const data = __DATA__;
  const n = data.n, nKeys = data.nKeys, labels = data.labels, keyLabels = data.keyLabels;
  const one = data.oneText;  // rows and columns the same tokens: a focused word is bold on both sides
  const raw = Uint8Array.from(atob(data.values), c => c.charCodeAt(0));
  const codes = new Uint16Array(n * nKeys);
  for (let i = 0; i < n * nKeys; i++) codes[i] = raw[2 * i] | (raw[2 * i + 1] << 8);
  const lut = Uint8Array.from(atob(data.colours), c => c.charCodeAt(0));
  const MASKED = 65535;
  const value = (r, c) => {
    const q = codes[r * nKeys + c];
    return q === MASKED ? null : data.low + q / 65534 * (data.high - data.low);
  };
  const canvas = document.getElementById("heatmap"), readout = document.getElementById("readout");
  const ctx = canvas.getContext("2d");
  const cell = Math.max(2, Math.min(40, Math.floor(720 / Math.max(n, nKeys, 1))));
  const font = "12px 'DejaVu Sans', 'Helvetica Neue', Helvetica, Arial, sans-serif";
  ctx.font = font;
  const widest = texts => Math.min(160, Math.max(...texts.map(t => ctx.measureText(t).width)) + 8);
  const upright = keyLabels.some(t => ctx.measureText(t).width + 4 > cell);
  const left = widest(labels) + 4, top = (upright ? widest(keyLabels) : 18) + 4;
  const stride = Math.max(1, Math.ceil(15 / cell));
  const ratio = window.devicePixelRatio || 1;
  const width = left + nKeys * cell + 8, height = top + n * cell + 8;
  canvas.width = Math.ceil(width * ratio); canvas.height = Math.ceil(height * ratio);
  canvas.style.width = width + "px"; canvas.style.height = height + "px";
  const cells = document.createElement("canvas"); cells.width = nKeys; cells.height = n;
  const pixels = cells.getContext("2d").createImageData(nKeys, n);
  for (let r = 0; r < n; r++) {
    let rowMax = 0;
    for (let c = 0; c < nKeys; c++) { const v = value(r, c); if (v !== null && v > rowMax) rowMax = v; }
    for (let c = 0; c < nKeys; c++) {
      const v = value(r, c), at = 4 * (r * nKeys + c);
      if (v === null) { pixels.data[at + 3] = 0; continue; }
      let f = data.span === "row" ? (rowMax > 0 ? v / rowMax : 0) : (v - data.low) / ((data.high - data.low) || 1);
      const k = 3 * Math.max(0, Math.min(255, Math.round(f * 255)));
      pixels.data[at] = lut[k]; pixels.data[at + 1] = lut[k + 1]; pixels.data[at + 2] = lut[k + 2];
      pixels.data[at + 3] = 255;
    }
  }
  cells.getContext("2d").putImageData(pixels, 0, 0);
  let hovered = null, pinned = null;  // {index, role}: role "looking" (a row) or "looked_at" (a column)
  const focus = () => hovered || pinned;
  const shown = v => data.percent ? (100 * v).toFixed(1) + " %" : v.toFixed(2);

  function draw() {
    const f = focus();
    ctx.setTransform(ratio, 0, 0, ratio, 0, 0);
    ctx.clearRect(0, 0, canvas.width, canvas.height);
    ctx.imageSmoothingEnabled = false;
    ctx.drawImage(cells, left, top, nKeys * cell, n * cell);
    const bold = (focused) => {
      ctx.font = (focused ? "bold " : "") + font;
      ctx.fillStyle = focused ? data.highlight : data.ink;
    };
    ctx.textBaseline = "middle"; ctx.textAlign = "right";
    for (let i = 0; i < n; i++) {
      const focused = f && (one || f.role === "looking") && f.index === i;
      if (!focused && i % stride !== 0) continue;
      bold(focused);
      ctx.fillText(labels[i], left - 4, top + (i + 0.5) * cell);
    }
    for (let j = 0; j < nKeys; j++) {
      const focused = f && (one || f.role === "looked_at") && f.index === j;
      if (!focused && j % stride !== 0) continue;
      bold(focused);
      ctx.save();
      ctx.translate(left + (j + 0.5) * cell, top - 4);
      if (upright) { ctx.rotate(-Math.PI / 2); ctx.textAlign = "left"; ctx.textBaseline = "middle"; }
      else { ctx.textAlign = "center"; ctx.textBaseline = "bottom"; }
      ctx.fillText(keyLabels[j], 0, 0);
      ctx.restore();
    }
    if (f) {
      ctx.strokeStyle = data.highlight; ctx.lineWidth = 2.5;
      if (f.role === "looking") ctx.strokeRect(left, top + f.index * cell, nKeys * cell, cell);
      else ctx.strokeRect(left + f.index * cell, top, cell, n * cell);
    }
    readout.textContent = f ? describe(f) : "Hover a word (or a cell) to see where it looks; click to keep it.";
  }

  function describe(f) {
    const looking = f.role === "looking", word = (looking ? labels : keyLabels)[f.index], items = [];
    const others = looking ? keyLabels : labels;
    for (let j = 0; j < others.length; j++) {
      const v = looking ? value(f.index, j) : value(j, f.index);
      if (v !== null) items.push([v, j]);
    }
    items.sort((a, b) => b[0] - a[0]);
    const top5 = items.slice(0, 5).map(([v, j]) => others[j] + " " + shown(v)).join(", ");
    return (looking ? "where “" + word + "” looks: " : "who looks at “" + word + "”: ") + top5;
  }

  function at(event) {
    const box = canvas.getBoundingClientRect();
    const x = event.clientX - box.left, y = event.clientY - box.top;
    const col = Math.floor((x - left) / cell), row = Math.floor((y - top) / cell);
    if (x < left && row >= 0 && row < n) return {index: row, role: "looking"};
    if (y < top && col >= 0 && col < nKeys) return {index: col, role: "looked_at"};
    if (row >= 0 && row < n && col >= 0 && col < nKeys) return {index: row, role: "looking"};
    return null;
  }

  canvas.addEventListener("mousemove", e => { hovered = at(e); draw(); });
  canvas.addEventListener("mouseleave", () => { hovered = null; draw(); });
  canvas.addEventListener("click", e => {
    const f = at(e);
    pinned = f && pinned && f.index === pinned.index && f.role === pinned.role ? null : f;
    draw();
  });
  window.attentionFigure = {
    n, nKeys, labels, keyLabels, focus: () => focus(),
    rowLabel: i => ({x: left - 8, y: top + (i + 0.5) * cell}),
    columnLabel: j => ({x: left + (j + 0.5) * cell, y: top - 8}),
    cell: (r, c) => ({x: left + (c + 0.5) * cell, y: top + (r + 0.5) * cell}),
    origin: () => { const b = canvas.getBoundingClientRect(); return {x: b.left, y: b.top}; },
  };
  draw();
})();
"""
