"""Qt's SVG made to look the same in every viewer (librsvg, Chromium, Inkscape), not only in Qt.

QSvgGenerator writes four things that other renderers draw differently:
- The font size asked for, not the one Qt drew: Qt's FreeType engine sets a font at whole pixels
  (8.5 pt at 96 dpi, 11.33 px, is laid out and drawn at 11 px), so librsvg and Chromium set every
  word 3 % larger than the PNG and a caption wrapped to Qt's width ran past the figure's edge. Each
  size becomes the one Qt drew (the caller, who has Qt, says which: `drawn_size`).
- `font-family="Sans Serif"`, Qt's own alias, which no browser knows: Chromium fell back to a serif
  font. Every family becomes a CSS stack: the font Qt really used, common sans-serif fonts, and the
  generic `sans-serif` last.
- Cosmetic pens as `vector-effect="non-scaling-stroke"` inside a group scaled 50–100 times (a heatmap
  cell is one unit): librsvg strokes them scaled anyway, and the focused row's frame came out as a
  pink hexagon over three rows; Qt's own renderer drew the bars' unstroked rectangles as hexagons
  too. The group's transform is applied to such shapes' own coordinates instead, so every renderer
  draws them at their size and their stroke at its width.
- Small pictures stretched large (a model view's 16 × 16 thumbnail drawn 47 pixels wide), which
  viewers smooth into a blur (librsvg even blends neighbouring cells of a picture drawn a few times
  its size): they are enlarged pixel by pixel (nearest neighbour) to at least their drawn size in
  the output's pixels and marked `image-rendering: pixelated`.
- An item drawn at an opacity (the arcs' lines, dimmed under a focused word) as one group per pen,
  each at that opacity, so that where lines of two groups cross they darken each other: the screen
  and the PNG dim the item's picture as a whole. Each run of consecutive groups at one opacity goes
  into one group at that opacity, which viewers composite as one picture.
Shapes neither filled nor stroked (pyqtgraph's plot areas) are dropped: they draw nothing, except in
Qt's SVG renderer on a PDF page, which filled such a frame's outline black around the heatmap. Empty
groups (Qt writes one per change of pen or brush) are dropped too, and the figure's view state is
added as <metadata>. No Qt here: the file is text, its images are PNG (Pillow reads them).
"""

from __future__ import annotations

import base64
import io
import math
import re
import xml.etree.ElementTree as ET
from collections.abc import Callable

SVG_NS = "http://www.w3.org/2000/svg"
XLINK_NS = "http://www.w3.org/1999/xlink"
ET.register_namespace("", SVG_NS)
ET.register_namespace("xlink", XLINK_NS)

GENERIC_FALLBACKS = ("DejaVu Sans", "Helvetica Neue", "Helvetica", "Arial", "Liberation Sans")
METADATA_ID = "attention-explorer-view"
NON_SCALING = "non-scaling-stroke"
PIXELATED = "image-rendering:pixelated"
MAX_ENLARGED_SIDE = 4096   # an enlarged picture stays at most this many pixels a side
# characters XML 1.0 does not allow, which Qt writes into an SVG's text as they come (a vertical tab in
# a token or a typed sentence made the file ill-formed: no viewer opened it), and DEL, which it allows
# but no font draws
_NOT_XML = re.compile("[\x00-\x08\x0b\x0c\x0e-\x1f\x7f\ufffe\uffff]")
_XML_PICTURES = {char: chr(0x2400 + ord(char)) for char in map(chr, range(0x20)) if _NOT_XML.match(char)}
_XML_PICTURES |= {"\x7f": "\u2421", "\ufffe": "\ufffd", "\uffff": "\ufffd"}
_NUMBER = re.compile(r"[-+]?(?:\d+\.?\d*|\.\d+)(?:[eE][-+]?\d+)?")
_MATRIX = re.compile(r"matrix\(([^)]*)\)")


def font_stack(family: str) -> str:
    """A CSS font-family list: `family` first, common sans-serif fonts, then the generic family."""
    names = [family] + [name for name in GENERIC_FALLBACKS if name != family]
    return ", ".join(f"'{name}'" if " " in name else name for name in names) + ", sans-serif"


def fix_svg(svg: bytes, *, family: str, drawn_size: Callable[[float], float], title: str, description: str,
            metadata: str | None, width: str, height: str, pixel_ratio: float = 1.0,
            max_enlarged: int = MAX_ENLARGED_SIDE, metadata_id: str = METADATA_ID) -> bytes:
    """The SVG of QSvgGenerator as every viewer draws it alike (see the module's text), sized `width` ×
    `height` (with their units: "820" or "8.5cm"), titled, described, and carrying `metadata` (a view
    state; None for a picture that is no view, such as the census grid) as <metadata id="`metadata_id`">;
    `drawn_size(px)`: the font size Qt drew for a written `px`; `pixel_ratio`: the output's pixels per
    unit of the drawing (what a picture is enlarged for), a picture left as it is when enlarging would
    take it past `max_enlarged` pixels a side."""
    root = _parsed(svg)
    stack = font_stack(family)
    sizes: dict[str, str] = {}
    for element in root.iter():
        if "font-family" in element.attrib:
            element.set("font-family", stack)
        written = element.get("font-size")
        if written is not None and _NUMBER.fullmatch(written):
            if written not in sizes:
                sizes[written] = _fmt(drawn_size(float(written)))
            element.set("font-size", sizes[written])
    _bake_scaled_shapes(root)
    transforms = _parent_transforms(root)
    for image in root.iter(f"{{{SVG_NS}}}image"):
        sx, sy = _scale_of(transforms.get(image, (1, 0, 0, 1, 0, 0)))
        _sharpen(image, (sx * pixel_ratio, sy * pixel_ratio), max_enlarged)
    _drop_invisible_shapes(root, "black", "none")
    _drop_empty_groups(root)
    _group_translucent_runs(root)
    root.set("width", width)
    root.set("height", height)
    _set_text(root, "title", title, 0)
    _set_text(root, "desc", description, 1)
    if metadata is not None:
        meta = ET.Element(f"{{{SVG_NS}}}metadata", {"id": metadata_id})
        meta.text = xml_text(metadata)
        root.insert(2, meta)
    return b'<?xml version="1.0" encoding="UTF-8" standalone="no"?>\n' + ET.tostring(root, encoding="utf-8",
                                                                                     xml_declaration=False)


def xml_text(text: str) -> str:
    """`text` with each character XML 1.0 does not allow shown as its Unicode picture (a control
    character: "\x0b" → "␋", DEL → "␡") or as U+FFFD (U+FFFE, U+FFFF)."""
    return _NOT_XML.sub(lambda found: _XML_PICTURES[found[0]], text)


def _parsed(svg: bytes) -> ET.Element:
    """Qt's SVG as a tree, its text made XML first (xml_text)."""
    return ET.fromstring(xml_text(svg.decode("utf-8", errors="replace")))


def _set_text(root: ET.Element, tag: str, text: str, position: int) -> None:
    element = root.find(f"{{{SVG_NS}}}{tag}")
    if element is None:
        element = ET.Element(f"{{{SVG_NS}}}{tag}")
        root.insert(position, element)
    element.text = xml_text(text)


# --- strokes ---------------------------------------------------------------------------------------

Matrix = tuple[float, float, float, float, float, float]


def _matrix(group: ET.Element) -> Matrix | None:
    match = _MATRIX.fullmatch(group.get("transform", "").strip())
    if not match:
        return None
    values = [float(x) for x in _NUMBER.findall(match.group(1))]
    return tuple(values) if len(values) == 6 else None


SHAPES = {f"{{{SVG_NS}}}{tag}" for tag in ("rect", "path", "polyline", "polygon", "line")}


def _bake_scaled_shapes(root: ET.Element) -> None:
    """Shapes under a scaling group that are drawn with a non-scaling stroke, or not stroked at all, get
    the group's transform in their own coordinates, in a sibling group with no transform (drawn in the
    same order). Text and pictures keep their group's transform."""
    for parent in list(root.iter()):
        for index, group in reversed(list(enumerate(parent))):
            matrix = _matrix(group) if group.tag == f"{{{SVG_NS}}}g" else None
            if matrix is None:
                continue
            unstroked = group.get("stroke") == "none"
            shapes = [child for child in group if child.tag in SHAPES and (
                child.get("vector-effect") == NON_SCALING or (unstroked and child.get("stroke") in (None, "none")))]
            for child in group:
                if child.get("vector-effect") == "none":
                    del child.attrib["vector-effect"]  # Qt's "none" says nothing; some renderers misread it
            if not shapes:
                continue
            if matrix == (1, 0, 0, 1, 0, 0):
                for child in shapes:
                    child.attrib.pop("vector-effect", None)  # without a transform it is the same thing
                continue
            baked = [child for child in shapes if _apply(child, matrix)]
            if not baked:
                continue
            if len(baked) == len(group):
                group.set("transform", "matrix(1,0,0,1,0,0)")
                continue
            twin = ET.Element(group.tag, dict(group.attrib))
            twin.set("transform", "matrix(1,0,0,1,0,0)")
            for child in baked:
                group.remove(child)
                twin.append(child)
            parent.insert(index + 1, twin)


def _map(matrix: Matrix, x: float, y: float) -> tuple[float, float]:
    a, b, c, d, e, f = matrix
    return a * x + c * y + e, b * x + d * y + f


def _fmt(value: float) -> str:
    return f"{value:.3f}".rstrip("0").rstrip(".") or "0"


def _apply(shape: ET.Element, matrix: Matrix) -> bool:
    """Move `matrix` into the shape's coordinates; False (shape left alone) for a shape not handled."""
    tag = shape.tag.rpartition("}")[2]
    if tag == "rect":
        x, y = float(shape.get("x", 0)), float(shape.get("y", 0))
        w, h = float(shape.get("width", 0)), float(shape.get("height", 0))
        corners = [_map(matrix, px, py) for px, py in ((x, y), (x + w, y), (x + w, y + h), (x, y + h))]
        if matrix[1] or matrix[2]:  # turned: a rectangle no more
            shape.tag = shape.tag.replace("rect", "polygon")
            for name in ("x", "y", "width", "height"):
                shape.attrib.pop(name, None)
            shape.set("points", " ".join(f"{_fmt(px)},{_fmt(py)}" for px, py in corners))
        else:
            xs, ys = [px for px, _ in corners], [py for _, py in corners]
            shape.set("x", _fmt(min(xs)))
            shape.set("y", _fmt(min(ys)))
            shape.set("width", _fmt(max(xs) - min(xs)))
            shape.set("height", _fmt(max(ys) - min(ys)))
    elif tag in ("polyline", "polygon"):
        numbers = [float(v) for v in _NUMBER.findall(shape.get("points", ""))]
        points = [_map(matrix, numbers[i], numbers[i + 1]) for i in range(0, len(numbers) - 1, 2)]
        shape.set("points", " ".join(f"{_fmt(px)},{_fmt(py)}" for px, py in points))
    elif tag == "line":
        for one, two in (("x1", "y1"), ("x2", "y2")):
            px, py = _map(matrix, float(shape.get(one, 0)), float(shape.get(two, 0)))
            shape.set(one, _fmt(px))
            shape.set(two, _fmt(py))
    elif tag == "path":
        mapped = _mapped_path(shape.get("d", ""), matrix)
        if mapped is None:
            return False
        shape.set("d", mapped)
    else:
        return False
    shape.attrib.pop("vector-effect", None)
    return True


def _mapped_path(d: str, matrix: Matrix) -> str | None:
    """A path of absolute moves, lines and curves with every point mapped (None for any other command)."""
    out = []
    for command, body in re.findall(r"([A-Za-z])([^A-Za-z]*)", d):
        numbers = [float(v) for v in _NUMBER.findall(body)]
        if command not in "MLCQZ" or len(numbers) % 2:
            return None
        points = (_map(matrix, numbers[i], numbers[i + 1]) for i in range(0, len(numbers), 2))
        out.append(command + " ".join(f"{_fmt(x)},{_fmt(y)}" for x, y in points))
    return " ".join(out)


# --- pictures --------------------------------------------------------------------------------------

def _parent_transforms(root: ET.Element) -> dict[ET.Element, Matrix]:
    """The transform of the group holding each picture (Qt nests one level)."""
    found = {}
    for group in root.iter(f"{{{SVG_NS}}}g"):
        matrix = _matrix(group) or (1, 0, 0, 1, 0, 0)
        for child in group:
            found[child] = matrix
    return found


def _scale_of(matrix: Matrix) -> tuple[float, float]:
    a, b, c, d, _e, _f = matrix
    return math.hypot(a, b), math.hypot(c, d)


def _sharpen(image: ET.Element, scale: tuple[float, float], max_side: int) -> None:
    """Enlarge a picture drawn larger than its pixels, pixel by pixel, and ask viewers not to smooth it."""
    from PIL import Image  # the figures' only use of Pillow besides the GIF

    href_key = f"{{{XLINK_NS}}}href" if f"{{{XLINK_NS}}}href" in image.attrib else "href"
    href = image.get(href_key, "")
    prefix = "data:image/png;base64,"
    image.set("style", PIXELATED)
    if not href.startswith(prefix):
        return
    with Image.open(io.BytesIO(base64.b64decode(href[len(prefix):]))) as picture:
        picture.load()
        width, height = picture.size
        drawn_w = float(image.get("width", width)) * scale[0]
        drawn_h = float(image.get("height", height)) * scale[1]
        kx = max(1, math.ceil(drawn_w / width))
        ky = max(1, math.ceil(drawn_h / height))
        if (kx == 1 and ky == 1) or width * kx > max_side or height * ky > max_side:
            return
        enlarged = picture.resize((width * kx, height * ky), Image.Resampling.NEAREST)
        buffer = io.BytesIO()
        enlarged.save(buffer, format="PNG", optimize=True)
    image.set(href_key, prefix + base64.b64encode(buffer.getvalue()).decode("ascii"))


NOT_DRAWN = {f"{{{SVG_NS}}}{tag}" for tag in ("defs", "clipPath", "mask", "pattern", "marker", "symbol")}


def _drop_invisible_shapes(parent: ET.Element, fill: str, stroke: str) -> None:
    """Remove the shapes under `parent` whose fill and stroke (their own, or inherited: `fill`, `stroke`)
    are both none."""
    for child in list(parent):
        if child.tag in NOT_DRAWN:
            continue  # a clip path's shapes outline, whatever their paint
        own_fill, own_stroke = child.get("fill", fill), child.get("stroke", stroke)
        if child.tag in SHAPES and own_fill == "none" and own_stroke == "none":
            parent.remove(child)
        else:
            _drop_invisible_shapes(child, own_fill, own_stroke)


def _drop_empty_groups(root: ET.Element) -> None:
    for parent in list(root.iter()):
        for child in list(parent):
            if child.tag == f"{{{SVG_NS}}}g" and len(child) == 0 and not (child.text or "").strip():
                parent.remove(child)


def _group_translucent_runs(root: ET.Element) -> None:
    """Each run of two or more consecutive sibling groups with one opacity below 1 moved into one group
    at that opacity, their own opacities dropped."""
    for parent in list(root.iter()):
        runs: list[list[ET.Element]] = []
        previous = None
        for child in parent:
            opacity = child.get("opacity") if child.tag == f"{{{SVG_NS}}}g" else None
            translucent = opacity is not None and float(opacity) < 1
            if translucent and opacity == previous:
                runs[-1].append(child)
            elif translucent:
                runs.append([child])
            previous = opacity
        for run in runs:
            if len(run) < 2:
                continue
            wrapper = ET.Element(f"{{{SVG_NS}}}g", {"opacity": run[0].get("opacity")})
            parent.insert(list(parent).index(run[0]), wrapper)
            for group in run:
                parent.remove(group)
                del group.attrib["opacity"]
                wrapper.append(group)


def without_group_opacity(svg: bytes) -> bytes:
    """Each group's opacity moved into its shapes' own fill and stroke opacities.

    Qt's SVG renderer draws a translucent group through an offscreen image, which a PDF then embeds
    at full page resolution (the arcs' dimmed lines: 16 MB and seconds); shapes with their own
    opacity stay vector. Only where two dimmed lines cross is the crossing a little darker."""
    root = _parsed(svg)
    for group in root.iter(f"{{{SVG_NS}}}g"):
        opacity = float(group.attrib.pop("opacity", 1))
        if opacity >= 1:
            continue
        for name in ("fill-opacity", "stroke-opacity"):
            group.set(name, _fmt(float(group.get(name, 1)) * opacity))
            for child in group:  # a shape's own opacity replaces the group's: scale it too
                if name in child.attrib:
                    child.set(name, _fmt(float(child.get(name)) * opacity))
    return ET.tostring(root, encoding="utf-8")


def read_metadata(svg_text: str) -> str | None:
    """The view state an exported SVG carries, as text (None when it carries none)."""
    import html

    match = re.search(rf'<metadata[^>]*id="{METADATA_ID}"[^>]*>(.*?)</metadata>', svg_text, re.DOTALL)
    if match is None:
        return None
    body = match.group(1).strip()
    if body.startswith("<![CDATA[") and body.endswith("]]>"):
        return body[9:-3]
    return html.unescape(body)
