# SPDX-License-Identifier: GPL-2.0 OR BSD-2-Clause
"""The services' chart, an SVG written by hand (no plotting library): a
horizontal group of bars per configuration, one bar per workload, each
with a whisker from its min to its max."""
from xml.sax.saxutils import escape

COLORS = ("#3b6ea8", "#e08a2c", "#5a9e4b", "#b04a5a", "#7a5ba8")
BAR_H, GAP, LABEL_W, PLOT_W, PAD = 11, 9, 190, 470, 16
FONT = "font-family='DejaVu Sans,Verdana,sans-serif'"


def _x(v, vmax):
    return LABEL_W + PAD + max(0.0, min(v, vmax)) / vmax * PLOT_W


def services_chart(sec, host):
    names = list(sec["workloads"])
    series = [(n, sec["workloads"][n]["noise"]) for n in names]
    by = {n: {r["config"]: r["ratio"] for r in sec["workloads"][n]["rows"]}
          for n in names}
    rows = [(r0["label"], [by[n].get(r0["config"]) for n in names])
            for r0 in sec["workloads"][names[0]]["rows"]]
    note = "%s, %d CPUs, Linux %s; %d repetitions, median and min-max" % (
        host["cpu"], host["cpus"], host["kernel"], sec["reps"])
    vmax = max([1.0] + [t["max"] for _, ts in rows for t in ts if t]) * 1.04
    ns = len(series)
    legend_h = 18 * ((ns + 2) // 3)
    top = 34 + legend_h + 16
    group_h = ns * BAR_H + GAP
    height = top + len(rows) * group_h + 62
    width = LABEL_W + PAD + PLOT_W + 70
    o = ["<svg xmlns='http://www.w3.org/2000/svg' width='%d' height='%d' "
         "viewBox='0 0 %d %d' %s font-size='12'>" % (width, height, width,
                                                     height, FONT),
         "<rect width='100%' height='100%' fill='white'/>",
         "<text x='%d' y='20' font-size='14' font-weight='bold'>%s</text>" %
         (PAD, "What a probe costs a real service")]
    for i, (name, noise) in enumerate(series):
        lx, ly = PAD + (i % 3) * 240, 38 + 18 * (i // 3)
        o.append("<rect x='%d' y='%d' width='12' height='12' fill='%s'/>" %
                 (lx, ly - 10, COLORS[i % len(COLORS)]))
        o.append("<text x='%d' y='%d'>%s (noise ±%.0f pts)</text>" % (
            lx + 17, ly, escape(name), 100 * noise))
    plot_bottom = top + len(rows) * group_h
    # Grid: every 0.1, labelled every 0.2; 1.0 is "as fast as untraced".
    t = 0.0
    while t <= vmax + 1e-9:
        x, one = _x(t, vmax), abs(t - 1) < 1e-6
        o.append("<line x1='%.1f' y1='%d' x2='%.1f' y2='%d' %s/>" % (
            x, top - 6, x, plot_bottom, "stroke='#333' stroke-width='1.2' "
            "stroke-dasharray='4 3'" if one else "stroke='#ddd'"))
        if abs(t * 5 - round(t * 5)) < 1e-6:
            o.append("<text x='%.1f' y='%d' text-anchor='middle' fill='#555'>"
                     "%.1f</text>" % (x, plot_bottom + 15, t))
        t += 0.1
    o.append("<text x='%.1f' y='%d' text-anchor='middle' fill='#333'>"
             "requests/s traced ÷ untraced (1.0: no cost)</text>" % (
                 _x(vmax / 2, vmax), plot_bottom + 31))
    for g, (label, vals) in enumerate(rows):
        y0 = top + g * group_h
        o.append("<text x='%d' y='%.1f' text-anchor='end'>%s</text>" % (
            LABEL_W, y0 + ns * BAR_H / 2 + 4, escape(label)))
        for i, v in enumerate(vals):
            if v is None:
                continue
            med_, lo, hi = v["median"], v["min"], v["max"]
            y = y0 + i * BAR_H
            x0, xm = _x(0, vmax), _x(med_, vmax)
            o.append("<rect x='%.1f' y='%.1f' width='%.1f' height='%d' "
                     "fill='%s'><title>%s: %.2f (%.2f-%.2f)</title></rect>" % (
                         x0, y + 1, max(0.5, xm - x0), BAR_H - 2,
                         COLORS[i % len(COLORS)],
                         escape("%s, %s" % (label, series[i][0])), med_, lo,
                         hi))
            xl, xh, yc = _x(lo, vmax), _x(hi, vmax), y + BAR_H / 2
            o.append("<path d='M%.1f %.1fH%.1fM%.1f %.1fV%.1fM%.1f %.1fV%.1f' "
                     "stroke='#222' stroke-width='1' fill='none'/>" % (
                         xl, yc, xh, xl, yc - 3, yc + 3, xh, yc - 3, yc + 3))
            o.append("<text x='%.1f' y='%.1f' font-size='9' fill='#333'>"
                     "%.2f</text>" % (max(xh, xm) + 4, yc + 3, med_))
    o.append("<text x='%d' y='%d' font-size='10' fill='#555'>%s</text>" %
             (PAD, height - 6, escape(note)))
    o.append("</svg>")
    return "\n".join(o) + "\n"

