#!/usr/bin/env python3
"""Export torchvision architectures to ONNX with random weights, plus a
seeded input and PyTorch's own output in the ONNX backend-test layout:

    OUT/<name>_b<batch>/model.onnx
    OUT/<name>_b<batch>/test_data_set_0/input_0.pb, output_0.pb

usage: export_models.py OUT NAME[:BATCH,...] ...
       e.g. export_models.py /tmp/m resnet50:1,4 mobilenet_v2:1
NAME@dyn exports NAME with a dynamic batch axis (dynamic_axes), as models
for serving are exported; it must be compiled with --input_shape.

Random weights are fine for checking arithmetic, but BatchNorm's default
running statistics (mean 0, var 1) would make the folding trivially exact,
so they are randomised too.  Deterministic: fixed seeds.
"""
import inspect
import os
import sys

import onnx
import onnx.numpy_helper
import torch
import torchvision


class MainOutput(torch.nn.Module):
    """Segmentation models return {"out": ..., "aux": ...}; ONNX users (and
    ATC) see the main head only."""

    def __init__(self, model):
        super().__init__()
        self.model = model

    def forward(self, x):
        return self.model(x)["out"]


def build(name):
    torch.manual_seed(0)
    seg = hasattr(torchvision.models.segmentation, name)
    ctor = getattr(torchvision.models.segmentation if seg else torchvision.models, name)
    # the builders are wrapped (torchvision's legacy-argument decorator):
    # their own parameters come from the signature, not the wrapper's code
    args = inspect.signature(ctor).parameters
    kw = {}
    if "weights" in args:
        kw["weights"] = None
    if "weights_backbone" in args:
        # the default would download ImageNet weights for the backbone
        kw["weights_backbone"] = None
    if name in ("googlenet", "inception_v3"):
        kw["aux_logits"] = False
        # Inception-v3's own init (truncated normal, std 0.1) grows the
        # activations to 1e13 through its 94 convs, past fp16's range;
        # PyTorch's default init keeps them in range
        kw["init_weights"] = name == "googlenet"
    model = ctor(**kw)
    with torch.no_grad():
        for m in model.modules():
            if isinstance(m, torch.nn.BatchNorm2d):
                m.running_mean.uniform_(-0.2, 0.2)
                m.running_var.uniform_(0.5, 1.5)
                m.weight.uniform_(0.5, 1.5)
                m.bias.uniform_(-0.2, 0.2)
    model.eval()
    model = MainOutput(model) if seg else model
    fit_fp16(model, image_size(name))
    return model


FP16_HEADROOM = 3.0e4  # below fp16's largest value, 65504
FP16_TARGET = 1.0e3    # where a rescaled model is brought


def largest_activation(model, x):
    """The largest |value| any module outputs on x."""
    top = [0.0]

    def hook(_m, _i, out):
        if isinstance(out, torch.Tensor) and out.is_floating_point() and out.numel():
            top[0] = max(top[0], float(out.detach().abs().max()))

    hs = [m.register_forward_hook(hook) for m in model.modules()]
    with torch.no_grad():
        model(x)
    for h in hs:
        h.remove()
    return top[0]


def fit_fp16(model, size):
    """Random weights in a deep residual network (ResNet-101 and -152) can
    grow the activations past fp16's range, which no trained model does and
    which the device (fp16, as ATC's force_fp16) cannot hold.  Such a model
    gets every BatchNorm's output divided by the same factor c (its running
    variance times c^2), the smallest of a few that brings the largest
    activation on a calibration image (its own seed) under FP16_TARGET.
    Models already in range are left exactly as they are."""
    g = torch.Generator().manual_seed(99)
    x = torch.randn(2, 3, size, size, generator=g)
    if largest_activation(model, x) <= FP16_HEADROOM:
        return
    bns = [m for m in model.modules() if isinstance(m, torch.nn.BatchNorm2d)]
    var = [m.running_var.clone() for m in bns]
    for c in (1.1, 1.2, 1.3, 1.5, 2.0, 3.0):
        with torch.no_grad():
            for m, v in zip(bns, var):
                m.running_var.copy_(v * (c * c))
        if largest_activation(model, x) <= FP16_TARGET:
            return


def image_size(name):
    return 299 if name == "inception_v3" else 224


def zero_symbolic(g, self):
    """x.zero_() (Swin v2 zeroes the key's share of its qkv bias): torch
    1.13's exporter has no symbolic for aten::zero; it is x * 0."""
    return g.op("Mul", self, g.op("Constant", value_t=torch.tensor(0.0)))


torch.onnx.register_custom_op_symbolic("aten::zero", zero_symbolic, 13)


def export(out, spec_name, batch):
    """spec_name NAME@dyn: exported with a dynamic batch axis (as exporters
    write models for serving), to be compiled with --input_shape."""
    name, _, variant = spec_name.partition("@")
    model = build(name)
    d = os.path.join(out, f"{spec_name}_b{batch}")
    os.makedirs(os.path.join(d, "test_data_set_0"), exist_ok=True)
    g = torch.Generator().manual_seed(1234 + batch)
    s = image_size(name)
    x = torch.randn(batch, 3, s, s, generator=g)
    with torch.no_grad():
        y = model(x)
    dyn = {"input": {0: "batch"}, "output": {0: "batch"}} if variant == "dyn" else None
    torch.onnx.export(model, x, os.path.join(d, "model.onnx"), opset_version=13,
                      input_names=["input"], output_names=["output"],
                      do_constant_folding=True, dynamic_axes=dyn)
    for fname, t in (("input_0.pb", x), ("output_0.pb", y)):
        tp = onnx.numpy_helper.from_array(t.numpy(), "input" if "input" in fname else "output")
        with open(os.path.join(d, "test_data_set_0", fname), "wb") as f:
            f.write(tp.SerializeToString())
    print(d)


def main():
    if len(sys.argv) < 3:
        print(__doc__, file=sys.stderr)
        return 2
    out = sys.argv[1]
    for spec in sys.argv[2:]:
        name, _, batches = spec.partition(":")
        for b in (batches or "1").split(","):
            export(out, name, int(b))
    return 0


if __name__ == "__main__":
    sys.exit(main())
