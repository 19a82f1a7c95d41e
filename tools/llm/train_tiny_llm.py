#!/usr/bin/python3
"""Trains the tiny fortune-telling Llama and writes its artifacts and PyTorch ground truth.

    /usr/bin/python3 tools/llm/train_tiny_llm.py --out OUT [--steps N] [--minutes M] [--threads T]

Stages (each deterministic for a fixed seed, thread count and BLAS):
  1. text: fortunes (corpus.py), split by fortune into train / held-out;
  2. tokenizer: byte-level BPE trained on the train split (bpe.py) -> OUT/tokenizer/tokenizer.json,
     tokenizer_config.json (bos/eos, ChatML chat_template);
  3. model: a Llama-style decoder (model.py) trained on the train split, some of the fortunes
     wrapped as ChatML turns ("Tell me a fortune about love." -> fortune) so that chat works
     (--chat-fraction, 0.1);
     --steps fixes the schedule, --minutes stops early if the machine is slower than planned
     (the log says which --stop-at repeats such a run exactly);
  4. OUT/model.pt (checkpoint), OUT/torch/model.onnx (TorchScript export, opset 17, one decoder
     step with past/present KV), OUT/ground_truth.json (held-out perplexity, greedy ids, samples),
     OUT/heldout.txt.
--skip-train reloads OUT/model.pt and redoes stage 4. The GenAI folders come from
make_genai_model.py --checkpoint OUT/model.pt (see tools/llm/README.md).
"""
import argparse
import json
import math
import os
import random
import shutil
import sys
import time

import numpy as np
import torch
import torch.nn.functional as F

sys.path.insert(0, os.path.dirname(os.path.abspath(__file__)))
from bpe import Tokenizer, train_bpe  # noqa: E402
from corpus import load_fortunes, split_fortunes  # noqa: E402
from make_genai_model import Shape, genai_config  # noqa: E402
from model import DecoderStep, LlamaConfig, LlamaModel, io_names  # noqa: E402

EOT, IM_START, IM_END = "<|endoftext|>", "<|im_start|>", "<|im_end|>"
SPECIALS = [EOT, IM_START, IM_END]
CHAT_TEMPLATE = (
    "{{ bos_token }}{% for message in messages %}{{ '<|im_start|>' + message['role'] + '\n' + "
    "message['content'] + '<|im_end|>' + '\n' }}{% endfor %}"
    "{% if add_generation_prompt %}{{ '<|im_start|>assistant\n' }}{% endif %}"
)
# Fortune files whose name makes a chat topic ("Tell me a fortune about <topic>.").
TOPICS = {
    "computers": "computers", "linux": "Linux", "love": "love", "food": "food", "law": "the law",
    "medicine": "medicine", "science": "science", "politics": "politics", "sports": "sports",
    "work": "work", "education": "education", "pets": "pets", "kids": "kids", "wisdom": "wisdom",
    "men-women": "men and women", "literature": "literature", "startrek": "Star Trek",
    "drugs": "drugs", "people": "people", "art": "art", "news": "the news", "riddles": "riddles",
}
PROMPTS = [  # the greedy ground truth: (name, text with special tokens)
    ("plain_empty", EOT),
    ("plain_the", EOT + "The"),
    ("plain_computer", EOT + "A computer is"),
    ("plain_quote", EOT + "Q: What do you call"),
    ("chat_love", None),  # filled with the chat template below
]


def chat_text(user, assistant=None):
    """The chat template rendered by hand (kept identical to CHAT_TEMPLATE)."""
    text = EOT + f"{IM_START}user\n{user}{IM_END}\n{IM_START}assistant\n"
    if assistant is not None:
        text += f"{assistant}{IM_END}\n"
    return text


def compact_json(obj):
    """Indented JSON with every list of numbers on one line."""
    import re
    text = json.dumps(obj, indent=1)
    return re.sub(r"\[[-0-9.,e\s]*\]", lambda m: "[" + ", ".join(m.group(0)[1:-1].split()).replace(",,", ",") + "]",
                  text)


def seed_all(seed):
    random.seed(seed)
    np.random.seed(seed)
    torch.manual_seed(seed)


def training_stream(tok, train, seed, chat_fraction):
    """All training documents as one id stream, in a seeded order; each starts with <|endoftext|>."""
    rng = random.Random(seed)
    docs = []
    for category, text in train:
        if rng.random() < chat_fraction:
            topic = TOPICS.get(category)
            user = f"Tell me a fortune about {topic}." if topic else "Tell me a fortune."
            docs.append(tok.encode(chat_text(user, text)))
        else:
            docs.append([tok.special[EOT]] + tok.encode(text, allow_special=False))
    rng.shuffle(docs)
    return np.array([i for d in docs for i in d], dtype=np.int64)


def heldout_stream(tok, heldout):
    ids = []
    for _, text in heldout:
        ids += [tok.special[EOT]] + tok.encode(text, allow_special=False)
    return np.array(ids + [tok.special[EOT]], dtype=np.int64)


@torch.no_grad()
def perplexity(model, stream, window):
    """Non-overlapping windows of `window` tokens, each scored from an empty cache: every token
    but a window's first is predicted. Returns (mean NLL in nats, predicted tokens)."""
    model.eval()
    total, count = 0.0, 0
    for start in range(0, len(stream) - 1, window):
        chunk = torch.from_numpy(stream[start:start + window])[None]
        if chunk.shape[1] < 2:
            break
        logits = model.forward_train(chunk[:, :-1])
        nll = F.cross_entropy(logits[0].double(), chunk[0, 1:], reduction="sum")
        total += nll.item()
        count += chunk.shape[1] - 1
    return total / count, count


@torch.no_grad()
def generate(model, prompt_ids, n_tokens, temperature=0.0, top_k=0, gen=None, stop=()):
    """Greedy (temperature 0) or sampled continuation with the KV cache (forward_step)."""
    model.eval()
    past = model.empty_past()
    ids = list(prompt_ids)
    x = torch.tensor([ids])
    out = []
    for _ in range(n_tokens):
        mask = torch.ones(1, len(ids), dtype=torch.int64)
        logits, past = model.forward_step(x, mask, past)
        last = logits[0, -1]
        if temperature <= 0:
            nxt = int(torch.argmax(last))
        else:
            scaled = last / temperature
            if top_k > 0:
                kth = torch.topk(scaled, top_k).values[-1]
                scaled = torch.where(scaled < kth, torch.full_like(scaled, -float("inf")), scaled)
            nxt = int(torch.multinomial(F.softmax(scaled, -1), 1, generator=gen))
        out.append(nxt)
        ids.append(nxt)
        if nxt in stop:
            break
        x = torch.tensor([[nxt]])
    return out


EDGE_TEXTS = [  # what fortunes lack: digits runs, contractions in capitals, odd whitespace, non-ASCII
    "In 1984, 12345678 people paid $3.50 each -- 99.9% of them.",
    "I'LL SAY IT'S THEIR dog's; you'd've thought we're done.",
    "tabs\tand  double  spaces\n\n\nand trailing   \n  indented line\r\nCRLF",
    "na\u00efve caf\u00e9, \u65e5\u672c\u8a9e, emoji \U0001F600 and \u00bd.",
    "<|im_start|>user\nHi!<|im_end|>\n<|im_start|>assistant\n",
    "<|endoftext|><|endoftext|>two specials, then text<|endoftext|>",
]


def tokenizer_cases(tok, heldout):
    """[{text, ids}] for the tokenizer cross-check: every held-out fortune, all of heldout.txt as one
    text, the chat prompts and a few edge cases."""
    texts = [text for _, text in heldout]
    texts.append("\n%\n".join(texts) + "\n")
    texts += [chat_text("Tell me a fortune about love."), chat_text("Hello", "Hi there.")] + EDGE_TEXTS
    return [{"text": t, "ids": tok.encode(t)} for t in texts]


def write_tokenizer(tok, out_dir, context_length):
    os.makedirs(out_dir, exist_ok=True)
    tok.save(os.path.join(out_dir, "tokenizer.json"))
    added = {str(i): {"content": s, "lstrip": False, "normalized": False, "rstrip": False,
                      "single_word": False, "special": True} for s, i in tok.special.items()}
    config = {
        "add_bos_token": False,
        "add_prefix_space": False,
        "added_tokens_decoder": added,
        "additional_special_tokens": [IM_START, IM_END],
        "bos_token": EOT,
        "chat_template": CHAT_TEMPLATE,
        "clean_up_tokenization_spaces": False,
        "eos_token": EOT,
        "errors": "replace",
        "model_max_length": context_length,
        "pad_token": EOT,
        "split_special_tokens": False,
        "tokenizer_class": "PreTrainedTokenizerFast",
    }
    with open(os.path.join(out_dir, "tokenizer_config.json"), "w") as f:
        json.dump(config, f, indent=2)
        f.write("\n")


def export_onnx(model, path):
    cfg = model.cfg
    inputs, outputs = io_names(cfg.num_layers)
    past_len, seq = 3, 2
    args = [torch.tensor([[5, 7]], dtype=torch.int64), torch.ones(1, past_len + seq, dtype=torch.int64)]
    for _ in range(cfg.num_layers):
        args += [torch.randn(1, cfg.num_kv_heads, past_len, cfg.head_dim) for _ in range(2)]
    axes = {"input_ids": {0: "batch_size", 1: "sequence_length"},
            "attention_mask": {0: "batch_size", 1: "total_sequence_length"},
            "logits": {0: "batch_size", 1: "sequence_length"}}
    for name in inputs[2:]:
        axes[name] = {0: "batch_size", 2: "past_sequence_length"}
    for name in outputs[1:]:
        axes[name] = {0: "batch_size", 2: "total_sequence_length"}
    os.makedirs(os.path.dirname(path), exist_ok=True)
    model.eval()
    torch.onnx.export(DecoderStep(model), tuple(args), path, input_names=inputs, output_names=outputs,
                      dynamic_axes=axes, opset_version=17, do_constant_folding=True)


def write_torch_folder(model, tok, tok_dir, folder):
    """The TorchScript export as a GenAI folder: model.onnx, tokenizer files, and a genai_config.json
    with past_present_share_buffer false (present = past + the new tokens, as the export computes)."""
    export_onnx(model, os.path.join(folder, "model.onnx"))
    c = model.cfg
    shape = Shape(c.hidden_size, c.num_layers, c.num_heads, c.num_kv_heads, c.intermediate_size, c.vocab_size,
                  c.context_length, head_dim=c.head_dim, bos=tok.special[EOT], eos=[tok.special[EOT], tok.special[IM_END]],
                  pad=tok.special[EOT])
    config = genai_config(shape)
    config["search"]["past_present_share_buffer"] = False
    with open(os.path.join(folder, "genai_config.json"), "w") as f:
        json.dump(config, f, indent=4)
        f.write("\n")
    for name in ("tokenizer.json", "tokenizer_config.json"):
        shutil.copyfile(os.path.join(tok_dir, name), os.path.join(folder, name))


def train(model, stream, args, log):
    cfg = model.cfg
    decay = [p for n, p in model.named_parameters() if p.dim() >= 2]
    no_decay = [p for n, p in model.named_parameters() if p.dim() < 2]
    opt = torch.optim.AdamW([{"params": decay, "weight_decay": args.weight_decay},
                             {"params": no_decay, "weight_decay": 0.0}], lr=args.lr, betas=(0.9, 0.95))
    rng = np.random.default_rng(args.seed)
    warmup = max(1, args.steps // 20)
    t0 = time.time()
    losses = []
    step = 0
    model.train()
    for step in range(1, args.steps + 1):
        lr = args.lr * (step / warmup if step <= warmup else
                        0.1 + 0.9 * 0.5 * (1 + math.cos(math.pi * (step - warmup) / (args.steps - warmup))))
        for g in opt.param_groups:
            g["lr"] = lr
        starts = rng.integers(0, len(stream) - args.seq - 1, size=args.batch)
        batch = torch.from_numpy(np.stack([stream[s:s + args.seq + 1] for s in starts]))
        logits = model.forward_train(batch[:, :-1])
        loss = F.cross_entropy(logits.reshape(-1, cfg.vocab_size), batch[:, 1:].reshape(-1))
        opt.zero_grad(set_to_none=True)
        loss.backward()
        torch.nn.utils.clip_grad_norm_(model.parameters(), 1.0)
        opt.step()
        losses.append(loss.item())
        elapsed = time.time() - t0
        if step % 10 == 0 or step == 1:
            log(f"step {step}/{args.steps} loss {np.mean(losses[-10:]):.3f} lr {lr:.2e} {elapsed / 60:.1f} min")
        if args.minutes and elapsed > args.minutes * 60:
            log(f"stopping at step {step}: --minutes {args.minutes} reached (--stop-at {step} repeats this run)")
            break
        if step == args.stop_at:
            log(f"stopping at step {step} (--stop-at)")
            break
    return {"steps": step, "planned_steps": args.steps, "tokens": step * args.batch * args.seq,
            "minutes": round((time.time() - t0) / 60, 2), "final_loss": round(float(np.mean(losses[-20:])), 4),
            "loss_every_10_steps": [round(float(np.mean(losses[i:i + 10])), 4) for i in range(0, len(losses), 10)]}


def main():
    ap = argparse.ArgumentParser(description=__doc__, formatter_class=argparse.RawDescriptionHelpFormatter)
    ap.add_argument("--out", required=True)
    ap.add_argument("--steps", type=int, default=400)
    ap.add_argument("--minutes", type=float, default=0, help="stop early after this much training time (0: no cap)")
    ap.add_argument("--stop-at", type=int, default=0, help="stop after this step, the schedule still that of --steps")
    ap.add_argument("--threads", type=int, default=1, help="torch threads (results depend on it)")
    ap.add_argument("--batch", type=int, default=16)
    ap.add_argument("--seq", type=int, default=128)
    ap.add_argument("--lr", type=float, default=3e-3)
    ap.add_argument("--weight-decay", type=float, default=0.1)
    ap.add_argument("--vocab", type=int, default=4096)
    ap.add_argument("--hidden", type=int, default=128)
    ap.add_argument("--layers", type=int, default=4)
    ap.add_argument("--heads", type=int, default=4)
    ap.add_argument("--kv-heads", type=int, default=2)
    ap.add_argument("--intermediate", type=int, default=384)
    ap.add_argument("--context", type=int, default=512)
    ap.add_argument("--seed", type=int, default=1234)
    ap.add_argument("--chat-fraction", type=float, default=0.1, help="share of fortunes wrapped as ChatML turns")
    ap.add_argument("--skip-train", action="store_true", help="reload OUT/model.pt, redo the outputs")
    args = ap.parse_args()
    torch.set_num_threads(args.threads)
    os.makedirs(args.out, exist_ok=True)
    log_file = open(os.path.join(args.out, "train.log"), "a")

    def log(msg):
        print(msg, flush=True)
        log_file.write(msg + "\n")
        log_file.flush()

    fortunes = load_fortunes()
    train_set, heldout = split_fortunes(fortunes, seed=args.seed)
    log(f"fortunes: {len(fortunes)} ({len(train_set)} train, {len(heldout)} held out)")
    with open(os.path.join(args.out, "heldout.txt"), "w") as f:
        f.write("\n%\n".join(text for _, text in heldout) + "\n")

    tok_dir = os.path.join(args.out, "tokenizer")
    ckpt_path = os.path.join(args.out, "model.pt")
    if args.skip_train:
        ckpt = torch.load(ckpt_path)
        cfg = LlamaConfig(**ckpt["config"])
        tok = Tokenizer.load(os.path.join(tok_dir, "tokenizer.json"))
        model = LlamaModel(cfg)
        model.load_state_dict(ckpt["state_dict"])
        train_info = ckpt["training"]
    else:
        seed_all(args.seed)
        t = time.time()
        tok = Tokenizer(train_bpe([text for _, text in train_set], args.vocab, len(SPECIALS)), SPECIALS)
        log(f"BPE: {tok.vocab_size} tokens in {time.time() - t:.0f} s")
        write_tokenizer(tok, tok_dir, args.context)
        stream = training_stream(tok, train_set, args.seed, args.chat_fraction)
        log(f"training stream: {len(stream)} tokens")
        cfg = LlamaConfig(vocab_size=tok.vocab_size, hidden_size=args.hidden, num_layers=args.layers,
                          num_heads=args.heads, num_kv_heads=args.kv_heads, head_dim=args.hidden // args.heads,
                          intermediate_size=args.intermediate, context_length=args.context)
        seed_all(args.seed)
        model = LlamaModel(cfg)
        log(f"model: {model.num_parameters()} parameters, {cfg}")
        train_info = train(model, stream, args, log)
        train_info.update(threads=args.threads, batch=args.batch, seq=args.seq, lr=args.lr, seed=args.seed,
                          chat_fraction=args.chat_fraction,
                          stream_tokens=int(len(stream)))
        torch.save({"config": cfg.to_dict(), "state_dict": model.state_dict(), "training": train_info}, ckpt_path)
        log(f"trained: {train_info['steps']} steps, {train_info['minutes']} min, loss {train_info['final_loss']}")

    model.eval()
    stream = heldout_stream(tok, heldout)
    nll, count = perplexity(model, stream, args.seq)
    log(f"held-out perplexity {math.exp(nll):.3f} over {count} tokens")

    # Greedy: 64 tokens, no stop, so every engine has 64 tokens to compare.
    greedy = []
    for name, text in PROMPTS:
        if text is None:
            text = chat_text("Tell me a fortune about love.")
        ids = tok.encode(text)
        out = generate(model, ids, 64)
        greedy.append({"name": name, "prompt": text, "prompt_ids": ids, "ids": out, "text": tok.decode(out)})
        log(f"greedy {name}: {tok.decode(out)!r}")

    gen = torch.Generator().manual_seed(args.seed)
    samples = []
    stops = tuple(tok.special.values())
    for text in [EOT] * 4 + [EOT + "The"] + [chat_text(f"Tell me a fortune about {t}.") for t in
                                              ("computers", "love", "food")]:
        out = generate(model, tok.encode(text), 120, temperature=0.8, top_k=40, gen=gen, stop=stops)
        samples.append({"prompt": text, "temperature": 0.8, "top_k": 40, "ids": out,
                        "text": tok.decode(out, skip_special=True)})
        log(f"sample: {text!r} -> {tok.decode(out, skip_special=True)!r}")

    with open(os.path.join(args.out, "tokenizer_cases.json"), "w") as f:
        json.dump(tokenizer_cases(tok, heldout), f)
        f.write("\n")
    write_torch_folder(model, tok, tok_dir, os.path.join(args.out, "torch"))
    truth = {
        "model": cfg.to_dict(),
        "parameters": model.num_parameters(),
        "training": train_info,
        "tokenizer": {"vocab_size": tok.vocab_size, "special": tok.special},
        "heldout": {
            "file": "heldout.txt",
            "method": ("fortunes of heldout.txt (separated by a line '%') tokenized one by one, each "
                       "preceded by <|endoftext|>, one more <|endoftext|> at the end; the stream cut into "
                       f"non-overlapping windows of {args.seq} tokens, each scored from an empty cache; "
                       "every token but a window's first is predicted; perplexity = exp(mean NLL)"),
            "window": args.seq,
            "predicted_tokens": count,
            "mean_nll": nll,
            "perplexity": math.exp(nll),
            "token_ids": stream.tolist(),
        },
        "greedy": greedy,
        "samples": samples,
        "pytorch": torch.__version__,
    }
    with open(os.path.join(args.out, "ground_truth.json"), "w") as f:
        f.write(compact_json(truth) + "\n")
    log(f"wrote {args.out}")


if __name__ == "__main__":
    main()
