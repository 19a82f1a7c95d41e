"""Replays mutant files through a fuzz target of a sanitizer build (xonnx_fuzz_replay) in
batches and charges each crash, sanitizer report or hang to the file the replay tool named
last (tools/mutate_node_tests.py, tools/mutate_json.py)."""
import concurrent.futures
import os
import re
import shutil
import subprocess


def replay_batch(replay, target, batch):
    """[(file, log)] of the files in batch that crashed or hung."""
    env = dict(os.environ)
    env.setdefault("ASAN_OPTIONS", "detect_leaks=1:abort_on_error=1:detect_stack_use_after_return=0")
    env.setdefault("UBSAN_OPTIONS", "print_stacktrace=1:halt_on_error=1")
    failed = []
    while batch:
        try:
            p = subprocess.run([replay, target] + batch, env=env, capture_output=True, timeout=60 + 2 * len(batch))
            if p.returncode == 0:
                break
            log = p.stderr.decode(errors="replace")
        except subprocess.TimeoutExpired as e:
            log = (e.stderr or b"").decode(errors="replace") + "\nTIMEOUT\n"
        named = re.findall(r"^\w+: (\S+)$", log, re.M)
        bad = named[-1] if named and named[-1] in batch else batch[0]
        failed.append((bad, log))
        batch = batch[batch.index(bad) + 1:]
    return failed


def replay_all(replay, target, out_dir, jobs, suffix, tag="mutations"):
    """Replays every OUT_DIR/*SUFFIX; failures are copied with their logs to OUT_DIR/failures."""
    files = sorted(os.path.join(out_dir, f) for f in os.listdir(out_dir) if f.endswith(suffix))
    batches = [files[i:i + 100] for i in range(0, len(files), 100)]
    fail_dir = os.path.join(out_dir, "failures")
    failures = 0
    with concurrent.futures.ThreadPoolExecutor(jobs) as pool:
        for failed in pool.map(lambda b: replay_batch(replay, target, b), batches):
            for path, log in failed:
                failures += 1
                os.makedirs(fail_dir, exist_ok=True)
                shutil.copy(path, fail_dir)
                with open(os.path.join(fail_dir, os.path.basename(path) + ".log"), "w") as f:
                    f.write(log)
                what = re.findall(r"^SUMMARY: .*$|^TIMEOUT$", log, re.M)
                print("[%s] FAILED %s: %s" % (tag, os.path.basename(path), what[-1] if what else "crashed"))
    print("[%s] %d files through %s: %d failed" % (tag, len(files), target, failures))
    return failures


def fresh_out_dir(out_dir, suffix):
    """Removes a previous run's mutants (and nothing else: a folder with other files is refused)."""
    if os.path.isdir(out_dir):
        strangers = [f for f in os.listdir(out_dir) if not f.endswith(suffix) and f != "failures"]
        if strangers:
            raise SystemExit("%s holds files other than mutants (%s): not replacing it" % (out_dir, strangers[0]))
        shutil.rmtree(out_dir)
    os.makedirs(out_dir)
