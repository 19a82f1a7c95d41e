"""Semantic fuzzing of the JSON files an LLM folder brings besides its model (tokenizer.json,
tokenizer_config.json with its chat templates, genai_config.json) and of requests to the
server: every value a valid file may hold differently, replayed through a fuzz target of a
sanitizer build.

    python3 tools/mutate_json.py TARGET OUT_DIR SEED_FILE... [--seed N] [--every K]
                                 [--replay BIN] [--jobs J]

TARGET is the fuzz target the files are for (tokenizer: tokenizer.json, a NUL byte and
tokenizer_config.json, or a folder holding them; genai_config; serve_request: request bodies). Each JSON document of a seed is walked (in arrays and
objects of more than 4 members, the first 3 and one picked by the seed) and each value replaced
by null, booleans, integers 0 / -1 / 2^31 - 1 / 2^31 / 2^32 / 2^53 / 2^63 - 1 / -2^63 / 2^64,
its neighbours when it is an integer, 1e308, NaN's stand-ins, an empty or 100,000-character
string, another string of the document (a token where a pattern was, a pattern where a token
was), hostile regular expressions and chat templates, [] and {}; members are removed, arrays
emptied, cut to one item or given their first item three more times. `--every K` keeps every
K-th mutant, written to OUT_DIR as <seed>.<n>.json; with --replay (scripts/fuzz-mutations.sh
passes build/sanitize/bin/xonnx_fuzz_replay) they run through TARGET, and a crash, sanitizer
report or hang is copied with its log to OUT_DIR/failures/ (exit status 1): fix the bug, then
copy the file to tests/bad_genai/TARGET/.
"""
import argparse
import copy
import json
import os
import random
import sys

from replay_mutants import fresh_out_dir, replay_all

INTS = [0, -1, 1, 2, 255, 256, 65536, 2**31 - 1, 2**31, 2**32, 2**53, 2**63 - 1, -2**63, 2**64]
STRINGS = ["", " ", "\u0000", "\u2581", "<0x0A>", "Ġ", "a b c", "%d%d%s", "\\", "x" * 100000,
           "\ufffd\U0001F600\u200b", "../../etc/passwd"]
REGEXES = ["(a*)*b", "[", "(", "\\p{Zzz}", "(?<=a)b", "a{1000}{1000}", "(\\w+\\s?)+$", "", ".*", "\\"]
TEMPLATES = ["{% for a in range(1000000) %}{% for b in range(1000000) %}{% endfor %}{% endfor %}",
             "{{ messages[0]['content'] * 1000000 }}", "{% macro f() %}{{ f() }}{{ f() }}{% endmacro %}{{ f() }}",
             "{{ 'a' ~ (messages | tojson(indent=64)) * 1000 }}", "{% if %}", "{{ raise_exception('x') }}"]


def strings_of(doc, out):
    if isinstance(doc, str):
        out.append(doc)
    elif isinstance(doc, list):
        for v in doc[:8]:
            strings_of(v, out)
    elif isinstance(doc, dict):
        for k, v in list(doc.items())[:8]:
            out.append(k)
            strings_of(v, out)


def value_variants(value, key, doc_strings, rng):
    out = [None, True, False, 1e308, -0.5, [], {}, rng.choice(STRINGS), rng.choice(doc_strings or [""])]
    out += rng.sample(INTS, 4)
    if isinstance(value, bool):
        out.append(not value)
    elif isinstance(value, int):
        out += [value - 1, value + 1, -value, value * 65536]
    elif isinstance(value, str):
        out += ["", value * 1000, value[:1], rng.choice(REGEXES)]
        if "template" in (key or "") or "{%" in value or "{{" in value:
            out += TEMPLATES
    elif isinstance(value, list):
        out += [[], value[:1], value[:1] * 3 + value, [None] + value[1:]]
    elif isinstance(value, dict):
        out += [{k: v for k, v in value.items() if k != kk} for kk in list(value)[:6]]
    return out


def children(node, rng):
    """(key, child) pairs visited: all of a small container, 4 of a large one."""
    items = list(node.items()) if isinstance(node, dict) else list(enumerate(node))
    if len(items) <= 4:
        return items
    return items[:3] + [rng.choice(items[3:])]


def mutants(doc, rng):
    """(path, replacement) pairs; replacement REMOVE deletes the member."""
    doc_strings = []
    strings_of(doc, doc_strings)
    out = []

    def walk(node, path, key):
        for v in value_variants(node, key, doc_strings, rng):
            out.append((path, v))
        if isinstance(node, (dict, list)):
            for k, child in children(node, rng):
                if isinstance(node, dict):
                    out.append((path + [k], REMOVE))
                walk(child, path + [k], k if isinstance(k, str) else key)

    walk(doc, [], None)
    return out


REMOVE = object()


def apply(doc, path, value):
    if not path:
        return value
    doc = copy.deepcopy(doc)
    node = doc
    for k in path[:-1]:
        node = node[k]
    if value is REMOVE:
        del node[path[-1]]
    else:
        node[path[-1]] = value
    return doc


def read_seed(path):
    """The JSON documents of a seed: a file's parts between NUL bytes, or a model folder's
    tokenizer.json and tokenizer_config.json."""
    if not os.path.isdir(path):
        with open(path, "rb") as f:
            return f.read().split(b"\0")
    parts = []
    for name in ("tokenizer.json", "tokenizer_config.json"):
        if os.path.exists(os.path.join(path, name)):
            with open(os.path.join(path, name), "rb") as f:
                parts.append(f.read())
    return parts


def generate(target, seeds, out_dir, seed, every):
    rng = random.Random(seed)
    count = kept = 0
    for path in seeds:
        parts = read_seed(path)
        docs = [json.loads(p) if p.strip() else None for p in parts]
        base = os.path.splitext(os.path.basename(os.path.normpath(path)))[0]
        for i, doc in enumerate(docs):
            if doc is None:
                continue
            for where, value in mutants(doc, rng):
                count += 1
                if count % every:
                    continue
                mutated = list(parts)
                mutated[i] = json.dumps(apply(doc, where, value), ensure_ascii=False).encode()
                with open(os.path.join(out_dir, "%s.%d.json" % (base, count)), "wb") as f:
                    f.write(b"\0".join(mutated))
                kept += 1
    print("[json-mutations] %d of %d %s mutants written to %s" % (kept, count, target, out_dir))


def main():
    ap = argparse.ArgumentParser(description=__doc__.split("\n")[0])
    ap.add_argument("target")
    ap.add_argument("out_dir")
    ap.add_argument("seeds", nargs="+")
    ap.add_argument("--seed", type=int, default=1)
    ap.add_argument("--every", type=int, default=1)
    ap.add_argument("--replay")
    ap.add_argument("--jobs", type=int, default=os.cpu_count() or 1)
    args = ap.parse_args()
    fresh_out_dir(args.out_dir, ".json")
    generate(args.target, args.seeds, args.out_dir, args.seed, args.every)
    if args.replay and replay_all(args.replay, args.target, args.out_dir, args.jobs, ".json", "json-mutations"):
        sys.exit(1)


if __name__ == "__main__":
    main()
