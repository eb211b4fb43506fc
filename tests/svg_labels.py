#!/usr/bin/env python3
"""Count what makes a gnuplot SVG chart hard to read (tests/plot_overlap.sh).

usage: svg_labels.py CHART.svg [LEADER_RGB]

Prints one line, "texts N overlaps N crossings N repeats N":
  overlaps   pairs of <text> elements whose boxes intersect;
  crossings  (leader segment, text) pairs where a leader line (a path
             stroked in LEADER_RGB, default "144, 144, 144", i.e. #909090,
             the charts' leader colour) passes through a text's box;
  repeats    texts that occur more than once (a label drawn twice), not
             counting numbers (tick labels).
Rotated texts are skipped.  A box is estimated from the text's anchor (the translate() of its group),
text-anchor and font-size: the PNG, drawn from the same script by
pngcairo, renders a character of font size s about 0.78 s px wide and 1.3 s
high (96 dpi points), more than the SVG does, so the boxes are sized for
the PNG; the baseline sits 0.3 of the height above the box's bottom.
Boxes are shrunk by 0.5 px, so that texts that only touch do not count.
"""
import re
import sys

TEXT = re.compile(r'<g transform="translate\(([-\d.]+),([-\d.]+)\)( rotate)?[^>]*?'
                  r'font-size="([\d.]+)"[^>]*?text-anchor="(\w+)"[^>]*>\s*'
                  r'<text[^>]*>(.*?)</text>', re.S)
PATH = re.compile(r"<path stroke='rgb\(([^)]*)\)'[^>]*?d='([^']*)'", re.S)
ENT = {"&amp;": "&", "&lt;": "<", "&gt;": ">", "&quot;": '"', "&apos;": "'"}


def unescape(s):
    for k, v in ENT.items():
        s = s.replace(k, v)
    return s


def boxes(svg):
    out = []
    for m in TEXT.finditer(svg):
        if m.group(3):
            continue  # rotated (axis labels, op_breakdown's ticks): not estimated
        x, y, size = float(m.group(1)), float(m.group(2)), float(m.group(4))
        text = unescape(re.sub(r"<[^>]*>", "", m.group(6)))
        if not text.strip():
            continue
        w, h = 0.78 * size * len(text), 1.3 * size
        x0 = x - w if m.group(5) == "end" else x - w / 2 if m.group(5) == "middle" else x
        out.append((text, x0 + 0.5, x0 + w - 0.5, y - 0.7 * h + 0.5, y + 0.3 * h - 0.5))
    return out


def segments(svg, rgb):
    want = rgb.replace(" ", "")
    for m in PATH.finditer(svg):
        if m.group(1).replace(" ", "") != want:
            continue
        pts = re.findall(r"([ML])([-\d.]+),([-\d.]+)", m.group(2))
        for (c0, x0, y0), (c1, x1, y1) in zip(pts, pts[1:]):
            if c1 == "L":
                yield float(x0), float(y0), float(x1), float(y1)


def crosses(seg, b):
    """Whether the segment passes through box b (sampled; leaders are short)."""
    x0, y0, x1, y1 = seg
    n = 64
    for i in range(1, n):  # the end points (dot, task) excluded
        t = i / n
        x, y = x0 + t * (x1 - x0), y0 + t * (y1 - y0)
        if b[1] < x < b[2] and b[3] < y < b[4]:
            return True
    return False


def main():
    svg = open(sys.argv[1], encoding="utf-8").read()
    rgb = sys.argv[2] if len(sys.argv) > 2 else "144, 144, 144"
    bx = boxes(svg)
    overlaps = 0
    for i, a in enumerate(bx):
        for b in bx[i + 1:]:
            if a[1] < b[2] and b[1] < a[2] and a[3] < b[4] and b[3] < a[4]:
                overlaps += 1
                print(f"  overlap: {a[0]!r} / {b[0]!r}", file=sys.stderr)
    crossings = 0
    for s in segments(svg, rgb):
        for b in bx:
            if crosses(s, b):
                crossings += 1
                print(f"  crossing: leader at x={s[0]:.1f} through {b[0]!r}", file=sys.stderr)
    seen = {}
    for b in bx:
        if not re.fullmatch(r"[-+0-9.eE% ]+", b[0]):
            seen[b[0]] = seen.get(b[0], 0) + 1
    repeats = sum(n - 1 for n in seen.values())
    for t, n in seen.items():
        if n > 1:
            print(f"  repeated {n}x: {t!r}", file=sys.stderr)
    print(f"texts {len(bx)} overlaps {overlaps} crossings {crossings} repeats {repeats}")


if __name__ == "__main__":
    main()
