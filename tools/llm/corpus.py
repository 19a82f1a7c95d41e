"""The training text: English fortunes from Debian's `fortunes` / `fortunes-min` packages.

Each fortune is one document. Cleaning keeps the line structure and drops what a small model
cannot use: fortunes with characters outside printable ASCII (overstrike, Latin-1, control codes)
and runs of spaces/tabs used for layout. The split into train and held-out is by fortune, fixed
by a seeded shuffle, so no held-out fortune is seen in training.
"""
import os
import random
import re

FORTUNE_DIR = "/usr/share/games/fortunes"
# Not prose: ASCII pictures, and a file of non-English text.
SKIPPED_FILES = {"ascii-art", "translate-me"}
_PRINTABLE = re.compile(r"^[\x20-\x7e\n\t]*$")


def clean_fortune(text):
    """Returns the cleaned fortune, or None when it is not plain printable ASCII."""
    if not _PRINTABLE.match(text):
        return None
    lines = [re.sub(r"[ \t]+", " ", line).strip() for line in text.split("\n")]
    while lines and not lines[0]:
        lines.pop(0)
    while lines and not lines[-1]:
        lines.pop()
    cleaned = "\n".join(lines)
    cleaned = re.sub(r"\n{3,}", "\n\n", cleaned)
    return cleaned or None


def load_fortunes(directory=FORTUNE_DIR):
    """[(category, text)] in file-name order, cleaned; category is the fortune file's name."""
    if not os.path.isdir(directory):
        raise SystemExit(f"{directory} not found: install the Debian packages fortunes and fortunes-min")
    out = []
    for name in sorted(os.listdir(directory)):
        path = os.path.join(directory, name)
        if "." in name or name in SKIPPED_FILES or not os.path.isfile(path):
            continue
        with open(path, "rb") as f:
            raw = f.read().decode("utf-8", errors="replace")
        for item in re.split(r"\n%\n", raw):
            text = clean_fortune(item.rstrip("%\n"))
            if text:
                out.append((name, text))
    if not out:
        raise SystemExit(f"no fortunes found in {directory}")
    return out


def split_fortunes(fortunes, heldout_fraction=0.05, seed=1234):
    """(train, heldout): a seeded shuffle, then the first `heldout_fraction` of it held out.
    Duplicate texts (fortunes repeated across files) all go to the side the first copy went to."""
    order = list(range(len(fortunes)))
    random.Random(seed).shuffle(order)
    n_heldout = int(len(order) * heldout_fraction)
    heldout_texts = {fortunes[i][1] for i in order[:n_heldout]}
    train = [fortunes[i] for i in order[n_heldout:] if fortunes[i][1] not in heldout_texts]
    heldout = [fortunes[i] for i in order[:n_heldout]]
    return train, heldout
