#!/usr/bin/python3
"""Make tests/models/digits_cnn: a small CNN trained on scikit-learn's bundled digits data set.

A real-data accuracy fixture for quantization (issue 5): the int8 model's top-1 accuracy on the
held-out split is compared with the float model's. Nothing is downloaded (the 8x8 digits ship
with scikit-learn: apt-get install python3-sklearn).

Writes (reproducibly: fixed split, torch.manual_seed(0), one thread):
  tests/models/digits_cnn/model.onnx                  opset 13, input "input" [batch,1,8,8] float
                                                      (pixels / 16, so in [0, 1]), output "logits" [batch,10]
  tests/models/digits_cnn/test_data_set_0/{input_0,output_0}.pb
                                                      the first 32 held-out images and torch's logits
  tests/models/digits_cnn/heldout_x.npy               float32 [450,1,8,8], the whole held-out split
  tests/models/digits_cnn/heldout_y.npy               int64 [450], its labels

Usage: /usr/bin/python3 tools/digits_fixture.py [--out DIR]
"""
import argparse
import os
import shutil

import numpy as np
import onnx
from onnx import numpy_helper
import torch
import torch.nn as nn
from sklearn.datasets import load_digits
from sklearn.model_selection import train_test_split

REPO = os.path.dirname(os.path.dirname(os.path.abspath(__file__)))
DEFAULT_OUT = os.path.join(REPO, "tests", "models", "digits_cnn")
HELDOUT_FRACTION = 0.25  # 450 of the 1797 images
EPOCHS = 40
MIN_ACCURACY = 0.95


class DigitsCNN(nn.Module):
    """conv3x3(16) relu, conv3x3(32) relu, maxpool 2, conv3x3(32) relu, flatten, linear 64, relu, linear 10."""

    def __init__(self):
        super().__init__()
        self.features = nn.Sequential(
            nn.Conv2d(1, 16, 3, padding=1), nn.ReLU(),
            nn.Conv2d(16, 32, 3, padding=1), nn.ReLU(),
            nn.MaxPool2d(2),
            nn.Conv2d(32, 32, 3, padding=1), nn.ReLU())
        self.classifier = nn.Sequential(nn.Flatten(), nn.Linear(32 * 4 * 4, 64), nn.ReLU(), nn.Linear(64, 10))

    def forward(self, x):
        return self.classifier(self.features(x))


def load_split():
    digits = load_digits()
    x = (digits.data.astype(np.float32) / 16.0).reshape(-1, 1, 8, 8)
    y = digits.target.astype(np.int64)
    return train_test_split(x, y, test_size=HELDOUT_FRACTION, random_state=0, stratify=y)


def train(x_train, y_train):
    torch.manual_seed(0)
    model = DigitsCNN()
    opt = torch.optim.Adam(model.parameters(), lr=2e-3)
    loss_fn = nn.CrossEntropyLoss()
    xt, yt = torch.from_numpy(x_train), torch.from_numpy(y_train)
    gen = torch.Generator().manual_seed(0)
    for _ in range(EPOCHS):
        model.train()
        perm = torch.randperm(len(xt), generator=gen)
        for i in range(0, len(xt), 64):
            idx = perm[i:i + 64]
            opt.zero_grad()
            loss_fn(model(xt[idx]), yt[idx]).backward()
            opt.step()
    model.eval()
    return model


def write_tensor(path, array, name):
    t = numpy_helper.from_array(array, name)
    with open(path, "wb") as f:
        f.write(t.SerializeToString())


def main():
    ap = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    ap.add_argument("--out", default=DEFAULT_OUT)
    args = ap.parse_args()
    torch.set_num_threads(1)
    x_train, x_test, y_train, y_test = load_split()
    model = train(x_train, y_train)
    with torch.no_grad():
        logits = model(torch.from_numpy(x_test)).numpy()
    accuracy = float((logits.argmax(1) == y_test).mean())
    print(f"held-out top-1 accuracy: {accuracy:.4f} ({len(y_test)} images)")
    if accuracy <= MIN_ACCURACY:
        raise SystemExit(f"accuracy {accuracy:.4f} <= {MIN_ACCURACY}: not writing the fixture")

    if os.path.isdir(args.out):
        shutil.rmtree(args.out)
    os.makedirs(os.path.join(args.out, "test_data_set_0"))
    model_path = os.path.join(args.out, "model.onnx")
    torch.onnx.export(model, torch.from_numpy(x_test[:1]), model_path, opset_version=13,
                      input_names=["input"], output_names=["logits"],
                      dynamic_axes={"input": {0: "batch"}, "logits": {0: "batch"}}, do_constant_folding=True)
    onnx.checker.check_model(onnx.load(model_path), full_check=True)

    batch = x_test[:32]
    with torch.no_grad():
        expected = model(torch.from_numpy(batch)).numpy()
    write_tensor(os.path.join(args.out, "test_data_set_0", "input_0.pb"), batch, "input")
    write_tensor(os.path.join(args.out, "test_data_set_0", "output_0.pb"), expected, "logits")
    np.save(os.path.join(args.out, "heldout_x.npy"), x_test.astype(np.float32))
    np.save(os.path.join(args.out, "heldout_y.npy"), y_test.astype(np.int64))
    print(f"wrote {args.out}")


if __name__ == "__main__":
    main()
