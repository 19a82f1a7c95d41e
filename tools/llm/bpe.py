"""Byte-level BPE: trainer, encoder/decoder, and the Hugging Face tokenizer.json writer.

The format is the one HF `tokenizers` writes for Llama-3-style byte-level BPE: no normalizer,
pre-tokenizer Sequence[Split(Llama-3 regex, Isolated), ByteLevel(use_regex=false)], model BPE
with `ignore_merges` (a pre-token that is itself in the vocabulary is one token), decoder
ByteLevel, and special tokens as added tokens that are split out before pre-tokenization.
Needs the `regex` module (Debian python3-regex) for the \\p{L} / \\p{N} classes of the split regex.
"""
import heapq
import json
from collections import Counter, defaultdict

import regex

# Llama-3's split regex, as in its tokenizer.json.
SPLIT_REGEX = (
    r"(?i:'s|'t|'re|'ve|'m|'ll|'d)|[^\r\n\p{L}\p{N}]?\p{L}+|\p{N}{1,3}| ?[^\s\p{L}\p{N}]+[\r\n]*"
    r"|\s*[\r\n]+|\s+(?!\S)|\s+"
)


def bytes_to_unicode():
    """GPT-2's map of the 256 byte values to printable unicode characters."""
    bs = list(range(ord("!"), ord("~") + 1)) + list(range(ord("\xa1"), ord("\xac") + 1)) + \
        list(range(ord("\xae"), ord("\xff") + 1))
    cs = bs[:]
    n = 0
    for b in range(256):
        if b not in bs:
            bs.append(b)
            cs.append(256 + n)
            n += 1
    return dict(zip(bs, (chr(c) for c in cs)))


BYTE_TO_CHAR = bytes_to_unicode()
CHAR_TO_BYTE = {c: b for b, c in BYTE_TO_CHAR.items()}
_SPLIT = regex.compile(SPLIT_REGEX)


def pretokenize(text):
    """The split regex's pieces, each mapped to byte-level characters."""
    return ["".join(BYTE_TO_CHAR[b] for b in piece.encode("utf-8")) for piece in _SPLIT.findall(text)]


def train_bpe(texts, vocab_size, n_special):
    """Merges [(a, b)] learned from `texts` until 256 bytes + merged tokens + specials = vocab_size.
    Pairs are chosen by count, ties by the pair's strings (deterministic). As in HF's trainer, a
    merge whose result is already a token (reached by another pair) is kept but adds no token."""
    n_tokens = vocab_size - n_special
    if n_tokens < 256:
        raise ValueError(f"vocab_size {vocab_size} is below 256 bytes + {n_special} special tokens")
    word_counts = Counter()
    for text in texts:
        word_counts.update(pretokenize(text))
    words = [list(w) for w in word_counts]
    counts = [word_counts[w] for w in word_counts]
    pair_count = defaultdict(int)
    pair_where = defaultdict(set)
    for i, w in enumerate(words):
        for a, b in zip(w, w[1:]):
            pair_count[(a, b)] += counts[i]
            pair_where[(a, b)].add(i)
    heap = [(-c, p) for p, c in pair_count.items()]
    heapq.heapify(heap)
    merges = []
    tokens = {BYTE_TO_CHAR[b] for b in range(256)}
    while len(tokens) < n_tokens and heap:
        neg, pair = heapq.heappop(heap)
        if pair_count.get(pair, 0) != -neg or -neg <= 0:
            continue  # a stale entry: the count changed after it was pushed
        merges.append(pair)
        merged = pair[0] + pair[1]
        tokens.add(merged)
        changed = set()
        for i in list(pair_where[pair]):
            w = words[i]
            c = counts[i]
            j = 0
            out = []
            while j < len(w):
                if j + 1 < len(w) and w[j] == pair[0] and w[j + 1] == pair[1]:
                    out.append(merged)
                    j += 2
                else:
                    out.append(w[j])
                    j += 1
            for a, b in zip(w, w[1:]):
                pair_count[(a, b)] -= c
                changed.add((a, b))
            for a, b in zip(out, out[1:]):
                pair_count[(a, b)] += c
                pair_where[(a, b)].add(i)
                changed.add((a, b))
            words[i] = out
        del pair_count[pair]
        del pair_where[pair]
        for p in changed:
            if p in pair_count and pair_count[p] > 0:
                heapq.heappush(heap, (-pair_count[p], p))
    return merges


class Tokenizer:
    def __init__(self, merges, special_tokens, ignore_merges=True):
        self.merges = [tuple(m) for m in merges]
        self.ranks = {m: r for r, m in enumerate(self.merges)}
        self.vocab = {BYTE_TO_CHAR[b]: b for b in range(256)}
        for a, b in self.merges:
            self.vocab.setdefault(a + b, len(self.vocab))
        self.special = {}
        for s in special_tokens:
            self.special[s] = len(self.vocab) + len(self.special)
        self.id_to_token = {i: t for t, i in self.vocab.items()}
        self.id_to_token.update({i: t for t, i in self.special.items()})
        self.ignore_merges = ignore_merges
        self._special_split = regex.compile("(" + "|".join(regex.escape(s) for s in special_tokens) + ")") \
            if special_tokens else None
        self._cache = {}

    @property
    def vocab_size(self):
        return len(self.vocab) + len(self.special)

    def _bpe(self, word):
        if self.ignore_merges and word in self.vocab:
            return [self.vocab[word]]
        cached = self._cache.get(word)
        if cached is not None:
            return cached
        parts = list(word)
        while len(parts) > 1:
            best = min(((self.ranks.get((a, b), 1 << 30), k) for k, (a, b) in enumerate(zip(parts, parts[1:]))))
            if best[0] == 1 << 30:
                break
            pair = self.merges[best[0]]
            out = []
            k = 0
            while k < len(parts):
                if k + 1 < len(parts) and parts[k] == pair[0] and parts[k + 1] == pair[1]:
                    out.append(pair[0] + pair[1])
                    k += 2
                else:
                    out.append(parts[k])
                    k += 1
            parts = out
        ids = [self.vocab[p] for p in parts]
        self._cache[word] = ids
        return ids

    def encode(self, text, allow_special=True):
        """Token ids; special-token strings in `text` become their ids (as HF does for added tokens)."""
        pieces = self._special_split.split(text) if (allow_special and self._special_split) else [text]
        ids = []
        for piece in pieces:
            if not piece:
                continue
            if piece in self.special and allow_special:
                ids.append(self.special[piece])
                continue
            for word in pretokenize(piece):
                ids.extend(self._bpe(word))
        return ids

    def decode(self, ids, skip_special=False):
        out = bytearray()
        text = []
        for i in ids:
            tok = self.id_to_token[int(i)]
            if tok in self.special:
                if not skip_special:
                    text.append(out.decode("utf-8", errors="replace"))
                    out = bytearray()
                    text.append(tok)
                continue
            out.extend(CHAR_TO_BYTE[c] for c in tok)
        text.append(out.decode("utf-8", errors="replace"))
        return "".join(text)

    def to_hf_json(self):
        """tokenizer.json as HF tokenizers writes it for a Llama-3-style byte-level BPE."""
        added = [{"id": i, "content": s, "single_word": False, "lstrip": False, "rstrip": False,
                  "normalized": False, "special": True} for s, i in self.special.items()]
        return {
            "version": "1.0",
            "truncation": None,
            "padding": None,
            "added_tokens": added,
            "normalizer": None,
            "pre_tokenizer": {
                "type": "Sequence",
                "pretokenizers": [
                    {"type": "Split", "pattern": {"Regex": SPLIT_REGEX}, "behavior": "Isolated", "invert": False},
                    {"type": "ByteLevel", "add_prefix_space": False, "trim_offsets": True, "use_regex": False},
                ],
            },
            "post_processor": {"type": "ByteLevel", "add_prefix_space": True, "trim_offsets": False,
                               "use_regex": True},
            "decoder": {"type": "ByteLevel", "add_prefix_space": True, "trim_offsets": True, "use_regex": True},
            "model": {
                "type": "BPE",
                "dropout": None,
                "unk_token": None,
                "continuing_subword_prefix": None,
                "end_of_word_suffix": None,
                "fuse_unk": False,
                "byte_fallback": False,
                "ignore_merges": self.ignore_merges,
                "vocab": dict(sorted(self.vocab.items(), key=lambda kv: kv[1])),
                "merges": [f"{a} {b}" for a, b in self.merges],
            },
        }

    def save(self, path):
        with open(path, "w", encoding="utf-8") as f:
            json.dump(self.to_hf_json(), f, indent=2, ensure_ascii=False)
            f.write("\n")

    @classmethod
    def load(cls, path):
        with open(path, encoding="utf-8") as f:
            d = json.load(f)
        model = d["model"]
        merges = [tuple(m.split(" ")) if isinstance(m, str) else tuple(m) for m in model["merges"]]
        specials = [t["content"] for t in sorted(d["added_tokens"], key=lambda t: t["id"])]
        tok = cls(merges, specials, ignore_merges=model.get("ignore_merges", False))
        if tok.vocab != model["vocab"]:
            raise ValueError(f"{path}: vocab does not follow from the merges")
        return tok
