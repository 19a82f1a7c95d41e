#!/usr/bin/python3
"""Checks xonnx and its converter over the model zoo (tools/export_zoo.py) against ONNX Runtime:
the slow tier's work (scripts/test-zoo.sh runs it).

1. expected: ORT's outputs on each model's test set (1 thread) become the expected values of a
   conformance tree WORK/ort-expected/<name>/ (model and inputs linked from the zoo); ORT's
   agreement with torch's outputs is reported alongside.
2. paths: `xonnx conformance` over that tree on every backend path: default, XNNPACK disabled
   (XONNX_DISABLE_XNNPACK=1: reference kernels), own kernels disabled (XONNX_DISABLE_OPTIMIZED=1),
   rtol 1e-3 / atol 1e-4, or twice ORT's own distance from torch where that is larger (path_atol).
3. convert: every model through `xonnx convert` at level 2, int8 static (calibrated on the zoo's
   calibration samples, --target-cosine 0.99: the nodes whose quantization costs the most stay
   float until held-out samples reach it), int8 dynamic, int4 and fp16; each file must pass libonnx's full checker
   (build/bin/onnx_check) and run in ORT, whose outputs must match ORT's on the original: level 2
   within rtol 1e-3 / atol 1e-4, fp16 cosine >= 0.999, int8 cosine >= 0.99, int4 cosine >= 0.9
   (the smallest over the outputs of 10 elements or more)
   (weight-only 4 bits: a floor that catches broken files), and top-1 equal on the classifiers
   (not for int4). On x86 without VNNI the int8 files are made with --reduce-range: ORT's u8s8
   kernels saturate there otherwise (docs/converter.md).

  /usr/bin/python3 tools/zoo_check.py [--zoo DIR] [--work DIR] [--only a,b] [--steps paths,convert]
Writes WORK/zoo-check.md (tables) and WORK/zoo-check.json; exits 1 if anything fails.
"""
import argparse
import json
import os
import platform
import shutil
import subprocess
import sys
import time

import numpy as np
import onnx
from onnx import numpy_helper

ROOT = os.path.dirname(os.path.dirname(os.path.abspath(__file__)))
sys.path.insert(0, os.path.dirname(os.path.abspath(__file__)))
from export_zoo import DEFAULT_OUT  # noqa: E402

RTOL, ATOL = 1e-3, 1e-4
PATHS = [("default", {}), ("no-xnnpack", {"XONNX_DISABLE_XNNPACK": "1"}),
         ("no-optimized", {"XONNX_DISABLE_OPTIMIZED": "1"})]
# variant -> (convert arguments, minimum cosine or None for the rtol/atol check, top-1 checked)
VARIANTS = {
    "level2": ([], None, True),
    "int8-static": (["--quantize", "int8", "--calibration-data", "{calibration}", "--target-cosine", "0.99"], 0.99, True),
    "int8-dynamic": (["--quantize", "int8"], 0.99, True),
    "int4": (["--quantize", "int4"], 0.9, False),
    "fp16": (["--quantize", "fp16"], 0.999, True),
}


def ort_saturates_u8s8():
    """ORT's uint8 x int8 kernels add product pairs in int16 on x86 without VNNI."""
    if platform.machine().lower() not in ("x86_64", "amd64"):
        return False
    try:
        with open("/proc/cpuinfo") as f:
            flags = set(next((l for l in f if l.startswith("flags")), "").split())
    except OSError:
        return False
    return not flags & {"avx512_vnni", "avx_vnni"}


def read_pb(path):
    t = onnx.TensorProto()
    with open(path, "rb") as f:
        t.ParseFromString(f.read())
    return numpy_helper.to_array(t)


def outputs_of(folder):
    out, k = [], 0
    while os.path.exists(os.path.join(folder, "output_%d.pb" % k)):
        out.append(read_pb(os.path.join(folder, "output_%d.pb" % k)))
        k += 1
    return out


def run(cmd, env=None, timeout=3600):
    t0 = time.time()
    done = subprocess.run(cmd, capture_output=True, text=True, env=env, timeout=timeout)
    return done, time.time() - t0


def last_error(done):
    text = (done.stderr or "") + (done.stdout or "")
    lines = [l for l in text.splitlines() if l.strip()]
    for l in lines:
        if "error" in l.lower() or "fail" in l.lower():
            return l.strip()[:300]
    return lines[-1].strip()[:300] if lines else "exit status %d" % done.returncode


def ort_run(model, inputs, out_dir):
    shutil.rmtree(out_dir, ignore_errors=True)
    done, _ = run(["node", os.path.join(ROOT, "tools", "ort_run.js"), model, "--test-data", inputs, out_dir])
    return None if done.returncode == 0 else last_error(done)


def close(got, want):
    """(within rtol/atol, max abs diff) over all outputs."""
    ok, worst = True, 0.0
    for g, w in zip(got, want):
        if g.shape != w.shape:
            return False, float("inf")
        if not np.issubdtype(w.dtype, np.floating):
            ok = ok and np.array_equal(g, w)
            continue
        g64, w64 = g.astype(np.float64), w.astype(np.float64)
        diff = np.abs(g64 - w64)
        worst = max(worst, float(diff.max()) if diff.size else 0.0)
        ok = ok and bool(np.all(diff <= ATOL + RTOL * np.abs(w64)))
    return ok, worst


MIN_COSINE_ELEMENTS = 10


def cosine(got, want):
    """Smallest cosine similarity over the float outputs of at least MIN_COSINE_ELEMENTS elements:
    the cosine of a 2-class head swings with any rounding (its top-1 is what counts)."""
    worst = 1.0
    for g, w in zip(got, want):
        if not np.issubdtype(w.dtype, np.floating) or w.size < MIN_COSINE_ELEMENTS:
            continue
        g64, w64 = g.astype(np.float64).ravel(), w.astype(np.float64).ravel()
        den = np.linalg.norm(g64) * np.linalg.norm(w64)
        c = float(g64 @ w64 / den) if den > 0 else float(np.array_equal(g64, w64))
        worst = min(worst, c)
    return worst


def top1_equal(got, want):
    return bool(np.array_equal(got[0].reshape(-1, got[0].shape[-1]).argmax(-1),
                               want[0].reshape(-1, want[0].shape[-1]).argmax(-1)))


def link(src, dst):
    if os.path.lexists(dst):
        os.remove(dst)
    os.symlink(os.path.abspath(src), dst)


# ----------------------------------------------------------------------------- steps
def expected(models, zoo, work):
    """ORT's outputs as the conformance tree's expected values; ORT against torch."""
    rows = {}
    for m in models:
        name = m["name"]
        case = os.path.join(work, "ort-expected", name)
        src_set = os.path.join(zoo, name, "test_data_set_0")
        out_set = os.path.join(case, "test_data_set_0")
        os.makedirs(out_set, exist_ok=True)
        link(os.path.join(zoo, name, "model.onnx"), os.path.join(case, "model.onnx"))
        for f in os.listdir(src_set):
            if f.startswith("input_"):
                link(os.path.join(src_set, f), os.path.join(out_set, f))
        stamp = os.path.join(case, "ort.ok")
        if not (os.path.exists(stamp) and os.path.getmtime(stamp) >= os.path.getmtime(os.path.join(zoo, name, "model.onnx"))):
            tmp = os.path.join(case, "ort-outputs")
            err = ort_run(os.path.join(zoo, name, "model.onnx"), src_set, tmp)
            if err:
                rows[name] = {"error": "ORT failed: " + err}
                print("  %-30s ORT failed: %s" % (name, err), flush=True)
                continue
            for f in os.listdir(tmp):
                shutil.move(os.path.join(tmp, f), os.path.join(out_set, f))
            shutil.rmtree(tmp)
            open(stamp, "w").close()
        ok, worst = close(outputs_of(out_set), outputs_of(src_set))
        rows[name] = {"ort_vs_torch_ok": ok, "ort_vs_torch_max_abs": worst}
    return rows


def path_atol(exp_row):
    """ATOL, or for a model whose own ORT and torch outputs differ by more (random weights through
    a deep net amplify float rounding: inception_v3 3e-4), twice that difference: xonnx must be
    as close to ORT as the two references are to each other, within a factor of 2."""
    return max(ATOL, 2 * exp_row.get("ort_vs_torch_max_abs", 0.0))


def paths(models, xonnx, work, timeout, exp):
    results = {}
    tree = os.path.join(work, "ort-expected")
    names = [m["name"] for m in models if os.path.exists(os.path.join(tree, m["name"], "ort.ok"))]
    by_atol = {}
    for name in names:
        by_atol.setdefault(path_atol(exp.get(name, {})), []).append(name)
    for path_name, extra in PATHS:
        env = dict(os.environ, **extra)
        t0 = time.time()
        summaries = []
        for atol, group in sorted(by_atol.items()):
            js = os.path.join(work, "conformance-%s-%g.json" % (path_name, atol))
            cmd = [xonnx, "conformance", tree, "--rtol", str(RTOL), "--atol", str(atol), "--timeout", str(timeout),
                   "--json", js, "--filter", "^(%s)$" % "|".join(group)]
            done = subprocess.run(cmd, capture_output=True, text=True, env=env)
            with open(js) as f:
                cases = json.load(f)["cases"]
            for c in cases:
                results.setdefault(c["name"], {})[path_name] = {"status": c["status"], "reason": c.get("reason", ""),
                                                                "ms": c.get("ms"), "atol": atol}
            summaries.append("atol %g: %s" % (atol, (done.stdout.strip().splitlines() or ["?"])[-1]))
        print("  path %-13s %s (%.0f s)" % (path_name, "; ".join(summaries), time.time() - t0), flush=True)
    return results


def convert(models, zoo, work, xonnx, onnx_check, variants, reduce_range):
    results = {}
    for m in models:
        name = m["name"]
        ort_ref = os.path.join(work, "ort-expected", name, "test_data_set_0")
        if not os.path.exists(os.path.join(work, "ort-expected", name, "ort.ok")):
            continue
        want = outputs_of(ort_ref)
        inputs = os.path.join(zoo, name, "test_data_set_0")
        row = results.setdefault(name, {})
        for v in variants:
            args, min_cos, check_top1 = VARIANTS[v]
            d = os.path.join(work, "converted", name)
            os.makedirs(d, exist_ok=True)
            out = os.path.join(d, v + ".onnx")
            args = [a.format(calibration=os.path.join(zoo, name, "calibration")) for a in args]
            if reduce_range and v.startswith("int8"):
                args.append("--reduce-range")
            r = {"ok": False}
            row[v] = r
            done, secs = run([xonnx, "convert", os.path.join(zoo, name, "model.onnx"), out] + args)
            r["convert_s"] = round(secs, 1)
            if done.returncode != 0:
                r["error"] = "convert: " + last_error(done)
                print("  %-30s %-13s %s" % (name, v, r["error"]), flush=True)
                continue
            r["bytes"] = os.path.getsize(out)
            done, _ = run([onnx_check, out])
            if done.returncode != 0:
                r["error"] = "checker: " + last_error(done)
            err = ort_run(out, inputs, os.path.join(d, v + "-ort"))
            if err:
                r["error"] = (r.get("error", "") + "; " if "error" in r else "") + "ORT: " + err
                print("  %-30s %-13s %s" % (name, v, r["error"]), flush=True)
                continue
            got = outputs_of(os.path.join(d, v + "-ort"))
            r["cosine"] = cosine(got, want)
            if min_cos is None:
                ok, worst = close(got, want)
                r["max_abs"] = worst
            else:
                ok = r["cosine"] >= min_cos
            if m.get("classifier") and check_top1:
                r["top1"] = top1_equal(got, want)
                ok = ok and r["top1"]
            r["ok"] = ok and "error" not in r
            status = "ok" if r["ok"] else "FAIL"
            print("  %-30s %-13s %s cosine %.6f%s%s" % (name, v, status, r["cosine"],
                  "" if "top1" not in r else " top-1 %s" % ("equal" if r["top1"] else "DIFFERS"),
                  "" if "error" not in r else " " + r["error"]), flush=True)
            shutil.rmtree(os.path.join(d, v + "-ort"), ignore_errors=True)
            os.remove(out)  # the converted files of the big models add up to gigabytes
            if os.path.exists(out + ".data"):
                os.remove(out + ".data")
    return results


# ---------------------------------------------------------------------------- report
def report(models, exp, path_res, conv_res, variants, reduce_range, out_md):
    lines = ["# Zoo check", "",
             "xonnx against ONNX Runtime 1.30 on every zoo model (tools/zoo_check.py). Backend paths: "
             "rtol %g / atol %g against ORT's outputs. Converter: checker + ORT run of each converted "
             "file, compared with ORT's outputs on the original%s." % (
                 RTOL, ATOL, " (int8 with --reduce-range: this x86 CPU has no VNNI)" if reduce_range else ""), ""]
    head = ["model", "family", "ORT vs torch"] + [p for p, _ in PATHS] + list(variants)
    lines += ["| " + " | ".join(head) + " |", "|" + "---|" * len(head)]
    failures = []
    for m in models:
        n = m["name"]
        e = exp.get(n, {})
        cells = [n, m["family"]]
        if "error" in e:
            cells.append(e["error"])
            failures.append("%s: %s" % (n, e["error"]))
        else:
            cells.append("ok" if e.get("ort_vs_torch_ok") else "differs (max abs %.2g)" % e.get("ort_vs_torch_max_abs", 0))
        for p, _ in PATHS:
            r = path_res.get(n, {}).get(p) if path_res is not None else None
            if r is None:
                cells.append("-")
                continue
            cells.append("pass" if r["status"] == "pass" else "**%s**" % r["status"])
            if r["status"] != "pass":
                failures.append("%s [%s]: %s" % (n, p, r["reason"]))
        for v in variants:
            r = conv_res.get(n, {}).get(v) if conv_res is not None else None
            if r is None:
                cells.append("-")
                continue
            txt = ("%.4f" % r["cosine"]) if "cosine" in r else ""
            if "top1" in r and not r["top1"]:
                txt += " top-1 differs"
            cells.append(txt if r["ok"] else "**FAIL** " + (txt or r.get("error", "")))
            if not r["ok"]:
                failures.append("%s [%s]: %s" % (n, v, r.get("error", txt)))
        lines.append("| " + " | ".join(cells) + " |")
    lines += ["", "Converter cells: the smallest cosine over the outputs (top-1 checked on the classifiers)."]
    if failures:
        lines += ["", "## Failures", ""] + ["- " + f for f in failures]
    with open(out_md, "w") as f:
        f.write("\n".join(lines) + "\n")
    return failures


def main():
    ap = argparse.ArgumentParser(description=__doc__.split("\n")[0])
    ap.add_argument("--zoo", default=DEFAULT_OUT)
    ap.add_argument("--work", default=os.path.join(ROOT, "build", "zoo-check"))
    ap.add_argument("--xonnx", default=os.path.join(ROOT, "build", "bin", "xonnx"))
    ap.add_argument("--onnx-check", default=os.path.join(ROOT, "build", "bin", "onnx_check"))
    ap.add_argument("--only", help="comma-separated model names")
    ap.add_argument("--steps", default="paths,convert", help="paths and/or convert (default %(default)s)")
    ap.add_argument("--variants", default=",".join(VARIANTS), help="converter variants (default %(default)s)")
    ap.add_argument("--timeout", type=int, default=1800, help="seconds per model and backend path")
    args = ap.parse_args()
    with open(os.path.join(args.zoo, "manifest.json")) as f:
        models = json.load(f)["models"]
    if args.only:
        want = set(args.only.split(","))
        models = [m for m in models if m["name"] in want]
    steps = set(args.steps.split(","))
    variants = [v for v in args.variants.split(",") if v]
    for v in variants:
        if v not in VARIANTS:
            ap.error("unknown variant %s" % v)
    reduce_range = ort_saturates_u8s8()
    os.makedirs(args.work, exist_ok=True)
    print("ORT outputs (expected values)", flush=True)
    exp = expected(models, args.zoo, args.work)
    path_res = conv_res = None
    if "paths" in steps:
        print("backend paths", flush=True)
        path_res = paths(models, args.xonnx, args.work, args.timeout, exp)
    if "convert" in steps:
        print("converter", flush=True)
        conv_res = convert(models, args.zoo, args.work, args.xonnx, args.onnx_check, variants, reduce_range)
    out_md = os.path.join(args.work, "zoo-check.md")
    failures = report(models, exp, path_res, conv_res, variants if conv_res is not None else [], reduce_range, out_md)
    with open(os.path.join(args.work, "zoo-check.json"), "w") as f:
        json.dump({"expected": exp, "paths": path_res, "convert": conv_res}, f, indent=1)
    print("\n%d models, %d failures; tables in %s" % (len(models), len(failures), out_md))
    for x in failures:
        print("FAIL " + x)
    return 1 if failures else 0


if __name__ == "__main__":
    sys.exit(main())
