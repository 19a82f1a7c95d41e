#!/usr/bin/python3
"""Writes the zoo comparison of bench/compare_ort.sh --zoo into docs/performance.md (between the
markers <!-- zoo:begin --> and <!-- zoo:end -->; the rest of the file is kept) and the ratio
chart into docs/img/zoo_ratio.png.

  bench/zoo_report.py --rows ROWS.json --profiles PROFILE.jsonl --manifest MANIFEST.json
                      [--rounds N] --doc docs/performance.md --png docs/img/zoo_ratio.png

ROWS.json: `node bench/ort/table.js RUNS --json` (medians of the rounds per model and thread
count); PROFILE.jsonl: one `xonnx bench --profile --json` line per model and thread count.
"""
import argparse
import datetime
import json
import math
import os
import platform

BEGIN, END = "<!-- zoo:begin -->", "<!-- zoo:end -->"


def cpu_name():
    try:
        with open("/proc/cpuinfo") as f:
            for line in f:
                if line.startswith("model name"):
                    return line.split(":", 1)[1].strip()
    except OSError:
        pass
    return platform.processor() or "unknown CPU"


def cpu_isa():
    try:
        with open("/proc/cpuinfo") as f:
            flags = next((l for l in f if l.startswith("flags")), "").split()
    except OSError:
        return "?"
    return "AVX-512" if "avx512f" in flags else "AVX2" if "avx2" in flags else "SSE"


def geomean(values):
    values = [v for v in values if v and v > 0]
    return math.exp(sum(math.log(v) for v in values) / len(values)) if values else None


def ratio(a, b):
    return a / b if isinstance(a, (int, float)) and isinstance(b, (int, float)) and b > 0 else None


def fmt(v, spec="%.2f", suffix=""):
    return (spec % v) + suffix if v is not None else "-"


def collect(rows, profiles, manifest):
    """Per zoo model: figures per thread count and the profile's reference share."""
    by_name = {m["name"]: m for m in manifest["models"]}
    models = {}
    for r in rows:
        name = os.path.basename(os.path.dirname(r["model"]))
        m = models.setdefault(name, {"name": name, "family": by_name.get(name, {}).get("family", "?"),
                                     "variant": by_name.get(name, {}).get("variant", ""), "t": {}})
        x, o = r.get("x", {}), r.get("o", {})
        ort_rss = o.get("peak_rss_mb") - o.get("base_rss_mb") if "peak_rss_mb" in o else None
        m["t"][r["threads"]] = {
            "x_ms": x.get("median_ms"), "o_ms": o.get("median_ms"), "ratio": ratio(x.get("median_ms"), o.get("median_ms")),
            "min_ratio": ratio(x.get("min_ms"), o.get("min_ms")),
            "init": ratio(x.get("init_ms"), o.get("init_ms")), "x_rss": x.get("peak_rss_mb"), "o_rss": ort_rss,
            "error": x.get("error") or o.get("error")}
    for p in profiles:
        name = os.path.basename(os.path.dirname(p["model"]))
        if name not in models or "backend_ms" not in p:
            continue
        total = sum(p["backend_ms"].values()) or 1.0
        ref = p.get("max_reference_node")
        models[name]["t"].setdefault(p["threads"], {})["profile"] = {
            "ref_share": p["backend_ms"].get("reference", 0.0) / total,
            "max_ref": ref, "top": p.get("top_nodes", []), "ops": p.get("ops", [])}
    order = [m["name"] for m in manifest["models"] if m["name"] in models]
    return [models[n] for n in order]


def table(models, threads):
    t1, t2 = threads[0], threads[-1]
    head = ["model", "family"]
    for t in threads:
        head += ["xonnx ms (%dt)" % t, "ORT ms (%dt)" % t, "xonnx/ORT %dt" % t]
    if len(threads) > 1:
        head += ["%dt/%dt xonnx" % (t2, t1), "%dt/%dt ORT" % (t2, t1)]
    head += ["init xonnx/ORT", "RSS MB xonnx", "RSS MB ORT", "reference %", "slowest reference node"]
    lines = ["| " + " | ".join(head) + " |", "|---|---|" + "---:|" * (len(head) - 2)]
    for m in models:
        cells = [m["name"], m["family"]]
        for t in threads:
            f = m["t"].get(t, {})
            if f.get("error"):
                cells += ["error", "error", "-"]
                continue
            cells += [fmt(f.get("x_ms"), "%.1f"), fmt(f.get("o_ms"), "%.1f"), fmt(f.get("ratio"), "%.2f", "x")]
        if len(threads) > 1:
            a, b = m["t"].get(t1, {}), m["t"].get(t2, {})
            cells += [fmt(ratio(b.get("x_ms"), a.get("x_ms")), "%.2f"), fmt(ratio(b.get("o_ms"), a.get("o_ms")), "%.2f")]
        f1 = m["t"].get(t1, {})
        prof = f1.get("profile", {})
        ref = prof.get("max_ref")
        cells += [fmt(f1.get("init"), "%.2f", "x"), fmt(f1.get("x_rss"), "%.0f"), fmt(f1.get("o_rss"), "%.0f"),
                  fmt(100 * prof["ref_share"] if prof else None, "%.1f"),
                  "%s %.1f %%" % (ref["op"], 100 * ref["share"]) if ref else "-"]
        lines.append("| " + " | ".join(cells) + " |")
    return lines


def summary(models, threads):
    out = []
    for t in threads:
        rs = [m["t"].get(t, {}).get("ratio") for m in models]
        rs = [r for r in rs if r]
        under = sum(1 for r in rs if r <= 0.9)
        out.append("- %d thread%s: geometric mean **%.2fx** ORT over %d models; %d at or under 0.9x, %d under 1.0x; "
                   "range %.2f-%.2fx." % (t, "s" if t > 1 else "", geomean(rs), len(rs), under,
                                          sum(1 for r in rs if r < 1.0), min(rs), max(rs)) if rs else
                   "- %d threads: no figures" % t)
    # The fastest timed run of each engine (median over the rounds): a busy host slows some runs
    # of a round, and rarely the fastest, so these ratios move less between runs than the medians.
    for t in threads:
        rs = [r for r in (m["t"].get(t, {}).get("min_ratio") for m in models) if r]
        if rs:
            out.append("- %d thread%s, fastest runs instead of medians: geometric mean %.2fx ORT; %d of %d at or under "
                       "0.9x, %d under 1.0x." % (t, "s" if t > 1 else "", geomean(rs), sum(1 for r in rs if r <= 0.9),
                                                len(rs), sum(1 for r in rs if r < 1.0)))
    inits = [m["t"].get(threads[0], {}).get("init") for m in models]
    rss = [ratio(m["t"].get(threads[0], {}).get("x_rss"), m["t"].get(threads[0], {}).get("o_rss")) for m in models]
    if any(inits):
        out.append("- session creation: geometric mean %.2fx ORT; peak RSS: geometric mean %.2fx ORT (net of Node.js)."
                   % (geomean(inits), geomean(rss) or float("nan")))
    refs = [(m["name"], m["t"].get(threads[0], {}).get("profile", {}).get("max_ref")) for m in models]
    over = [(n, r) for n, r in refs if r and r["share"] > 0.02]
    out.append("- reference-backend nodes above 2 %% of a model's time (%d thread): %s." % (
        threads[0], ", ".join("%s (%s %.0f %%)" % (n, r["op"], 100 * r["share"]) for n, r in over) if over else "none"))
    if len(threads) > 1:
        slow = [m for m in models if (m["t"].get(threads[0], {}).get("x_ms") or 0) > 5]
        ok = [m for m in slow if (ratio(m["t"].get(threads[-1], {}).get("x_ms"), m["t"][threads[0]]["x_ms"]) or 9) <= 0.6]
        out.append("- %d threads at or under 0.6x of 1 thread: %d of the %d models over 5 ms." % (threads[-1], len(ok), len(slow)))
    return out


def zoo_list(manifest):
    lines = ["| model | family | export | inputs | note |", "|---|---|---|---|---|"]
    for m in manifest["models"]:
        inputs = ", ".join("%s %s[%s]" % (i["name"], i["dtype"], ",".join(map(str, i["shape"]))) for i in m["inputs"])
        if len(inputs) > 90:
            inputs = "%s ... (%d inputs)" % (inputs[:60].rsplit(",", 1)[0], len(m["inputs"]))
        lines.append("| %s | %s | %s | %s | %s |" % (m["name"], m["family"], m["variant"], inputs, m.get("note", "")))
    return lines


def chart(models, threads, png):
    import matplotlib
    matplotlib.use("Agg")
    import matplotlib.pyplot as plt
    ms = [m for m in models if m["t"].get(threads[0], {}).get("ratio")]
    ms.sort(key=lambda m: m["t"][threads[0]]["ratio"])
    fig, ax = plt.subplots(figsize=(9, 0.32 * len(ms) + 1.5))
    h = 0.8 / len(threads)
    for k, t in enumerate(threads):
        vals = [m["t"].get(t, {}).get("ratio") or 0 for m in ms]
        ax.barh([i + (k - (len(threads) - 1) / 2) * h for i in range(len(ms))], vals, height=h,
                label="%d thread%s" % (t, "s" if t > 1 else ""))
    ax.axvline(1.0, color="black", linewidth=1)
    ax.axvline(0.9, color="green", linestyle="--", linewidth=1, label="target 0.9x")
    ax.set_yticks(range(len(ms)))
    ax.set_yticklabels([m["name"] for m in ms], fontsize=8)
    ax.set_xlabel("latency xonnx / ONNX Runtime 1.30 (median of alternating rounds; below 1 = xonnx faster)")
    ax.legend(loc="lower right", fontsize=8)
    ax.grid(axis="x", alpha=0.3)
    fig.tight_layout()
    os.makedirs(os.path.dirname(png) or ".", exist_ok=True)
    fig.savefig(png, dpi=110)


def main():
    ap = argparse.ArgumentParser(description=__doc__.split("\n")[0])
    ap.add_argument("--rows", required=True)
    ap.add_argument("--profiles", required=True)
    ap.add_argument("--manifest", required=True)
    ap.add_argument("--rounds", type=int, default=1)
    ap.add_argument("--cpu", default="", help="the CPU the 1-thread runs were pinned to (empty: not pinned)")
    ap.add_argument("--doc", required=True)
    ap.add_argument("--png", required=True)
    args = ap.parse_args()
    with open(args.rows) as f:
        rows = json.load(f)
    with open(args.profiles) as f:
        profiles = [json.loads(l) for l in f if l.strip().startswith("{")]
    with open(args.manifest) as f:
        manifest = json.load(f)
    models = collect(rows, profiles, manifest)
    threads = sorted({t for m in models for t in m["t"]})
    chart(models, threads, args.png)
    png_rel = os.path.relpath(args.png, os.path.dirname(os.path.abspath(args.doc)))
    section = [BEGIN,
               "Measured %s on %s (%d cores, %s path), `bench/compare_ort.sh --zoo --rounds %d`: "
               "each figure is the median over %d alternating rounds (xonnx, then ORT, per round)%s. "
               "On a host shared with other jobs single cells move by 10-30 %%; the ratios of one run "
               "are steadier than the absolute times." % (datetime.date.today().isoformat(), cpu_name(),
                                                         os.cpu_count() or 0, cpu_isa(), args.rounds, args.rounds,
                                                         "; both engines' 1-thread runs on CPU %s" % args.cpu
                                                         if args.cpu else ""),
               "", ] + summary(models, threads) + ["", "![xonnx / ORT latency per zoo model](%s)" % png_rel, ""]
    section += table(models, threads)
    section += ["", "Ratios are xonnx / ORT (below 1 = xonnx faster or smaller). \"reference %\": the share of "
                "xonnx's profiled 1-thread run spent in reference-backend kernels; \"slowest reference node\": its "
                "largest single node. ORT's RSS is net of the bare Node.js process.", "",
                "The models (`tools/export_zoo.py`, torch 1.13 / torchvision 0.14, random weights; the shapes "
                "are the ones benchmarked):", ""] + zoo_list(manifest) + [END]
    text = ""
    if os.path.exists(args.doc):
        with open(args.doc) as f:
            text = f.read()
    if BEGIN in text and END in text:
        text = text[:text.index(BEGIN)] + "\n".join(section) + text[text.index(END) + len(END):]
    else:
        text = text + ("\n" if text else "# Performance\n\n") + "\n".join(section) + "\n"
    with open(args.doc, "w") as f:
        f.write(text)
    print("wrote %s and %s" % (args.doc, args.png))


if __name__ == "__main__":
    main()
