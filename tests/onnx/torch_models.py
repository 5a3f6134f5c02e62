#!/usr/bin/env python3
"""Real architectures from PyTorch and torchvision as ONNX test folders.

  torch_models.py DIR [--only NAME,...] [--image-size N] [--torchscript] [--run PROGRAM ARG...]

Builds each model of MODELS with fixed seeds and random weights (nothing is
downloaded; images of --image-size pixels a side, 96 by default), in eval mode, exports it with torch.onnx.export (opset 17,
constant folding on) and writes, in the layout of ONNX's test data,
DIR/<name>/model.onnx and DIR/<name>/test_data_set_0/{input,output}_<k>.pb:
the inputs and PyTorch's outputs. With --torchscript, each model is also
traced (torch.jit.trace, the same module in eval mode with the same weights)
and saved as DIR/<name>/model.pt, for LibTorch's torch::jit::load (onnx_bench
times it beside the ONNX model). DIR is emptied first. With --run, the
rest of the command line runs after, with "{dir}" replaced by DIR, and its
exit status is the script's. Without torch (Debian's python3-torch and
python3-torchvision) the script prints why and exits 77, ctest's
SKIP_RETURN_CODE.
"""
import argparse
import os
import shutil
import subprocess
import sys
import warnings

SKIPPED = 77
OPSET = 17

try:
    import onnx
    import onnx.numpy_helper
    import torch
    import torchvision
except ImportError as e:
    print(f"skipped: {e} (apt-get install python3-torch python3-torchvision python3-onnx)")
    sys.exit(SKIPPED)


class LeNet5(torch.nn.Module):
    def __init__(self):
        super().__init__()
        self.features = torch.nn.Sequential(
            torch.nn.Conv2d(1, 6, 5), torch.nn.Tanh(), torch.nn.AvgPool2d(2),
            torch.nn.Conv2d(6, 16, 5), torch.nn.Tanh(), torch.nn.AvgPool2d(2))
        self.classifier = torch.nn.Sequential(
            torch.nn.Linear(16 * 5 * 5, 120), torch.nn.Tanh(),
            torch.nn.Linear(120, 84), torch.nn.Tanh(), torch.nn.Linear(84, 10))

    def forward(self, x):
        return self.classifier(torch.flatten(self.features(x), 1))


class LstmLanguageModel(torch.nn.Module):
    """Token ids (batch, time) -> next-token logits (batch, time, vocab)."""

    def __init__(self, vocab=100, width=32):
        super().__init__()
        self.embed = torch.nn.Embedding(vocab, width)
        self.lstm = torch.nn.LSTM(width, width, num_layers=2, batch_first=True)
        self.head = torch.nn.Linear(width, vocab)

    def forward(self, tokens):
        return self.head(self.lstm(self.embed(tokens))[0])


def transformer_encoder():
    layer = torch.nn.TransformerEncoderLayer(64, 4, dim_feedforward=128)
    return torch.nn.TransformerEncoder(layer, 2), (torch.randn(8, 1, 64),)


def image(size, channels=3):
    return torch.randn(1, channels, size, size)


# The side of the vision models' images: 96 unless --image-size says.
IMAGE_SIZE = [96]


def vision(builder, **kwargs):
    return lambda: (builder(weights=None, **kwargs), (image(IMAGE_SIZE[0]),))


# name -> a function giving (the module, its example inputs). Images are
# 96x96 (the smallest size comfortably above every net's downsampling, 32x)
# unless --image-size says; sequences have 8 steps.
MODELS = {
    "resnet18": vision(torchvision.models.resnet18),
    "mobilenet_v2": vision(torchvision.models.mobilenet_v2),
    "squeezenet1_1": vision(torchvision.models.squeezenet1_1),
    "shufflenet_v2_x0_5": vision(torchvision.models.shufflenet_v2_x0_5),
    "efficientnet_b0": vision(torchvision.models.efficientnet_b0),
    "googlenet": vision(torchvision.models.googlenet, aux_logits=False, init_weights=True),
    "densenet121": vision(torchvision.models.densenet121),
    "mnasnet0_5": vision(torchvision.models.mnasnet0_5),
    "lenet5": lambda: (LeNet5(), (image(32, channels=1),)),
    "lstm_lm": lambda: (LstmLanguageModel(), (torch.randint(0, 100, (1, 8)),)),
    "bigru": lambda: (torch.nn.GRU(16, 24, bidirectional=True), (torch.randn(8, 1, 16),)),
    "transformer_encoder": transformer_encoder,
}


def randomize_batch_norms(module):
    """Running statistics other than (0, 1), so that normalization is not the identity."""
    for m in module.modules():
        if isinstance(m, torch.nn.BatchNorm2d):
            m.running_mean.uniform_(-0.1, 0.1)
            m.running_var.uniform_(0.5, 1.5)
            m.weight.data.uniform_(0.5, 1.5)
            m.bias.data.uniform_(-0.1, 0.1)


def write(tensors, folder, prefix, names):
    for k, (t, name) in enumerate(zip(tensors, names)):
        proto = onnx.numpy_helper.from_array(t.detach().numpy(), name)
        with open(os.path.join(folder, f"{prefix}_{k}.pb"), "wb") as f:
            f.write(proto.SerializeToString())


def export(name, folder, torchscript):
    torch.manual_seed(0)
    module, inputs = MODELS[name]()
    module.eval()
    randomize_batch_norms(module)
    with torch.no_grad():
        outputs = module(*inputs)
    outputs = outputs if isinstance(outputs, tuple) else (outputs,)
    input_names = [f"input_{k}" for k in range(len(inputs))]
    output_names = [f"output_{k}" for k in range(len(outputs))]
    os.makedirs(os.path.join(folder, "test_data_set_0"))
    torch.onnx.export(module, inputs, os.path.join(folder, "model.onnx"), opset_version=OPSET,
                      do_constant_folding=True, input_names=input_names,
                      output_names=output_names)
    data = os.path.join(folder, "test_data_set_0")
    write(inputs, data, "input", input_names)
    write(outputs, data, "output", output_names)
    if torchscript:
        with torch.no_grad():
            torch.jit.trace(module, inputs).save(os.path.join(folder, "model.pt"))


def main():
    p = argparse.ArgumentParser(description=__doc__,
                                formatter_class=argparse.RawDescriptionHelpFormatter)
    p.add_argument("dir")
    p.add_argument("--only", help="comma-separated names of MODELS (all by default)")
    p.add_argument("--image-size", type=int, default=96, help="the vision models' image side")
    p.add_argument("--torchscript", action="store_true",
                   help="also save each model as TorchScript, DIR/<name>/model.pt")
    p.add_argument("--run", nargs=argparse.REMAINDER, help="the command to run after")
    a = p.parse_args()
    IMAGE_SIZE[0] = a.image_size
    names = a.only.split(",") if a.only else list(MODELS)
    torch.set_num_threads(1)
    # The exporter's notes on recurrent nets' batch size and on its own shape inference.
    warnings.filterwarnings("ignore", category=UserWarning, module=r"torch\.onnx")
    shutil.rmtree(a.dir, ignore_errors=True)
    for name in names:
        export(name, os.path.join(a.dir, name), a.torchscript)
        print(f"exported {name}", flush=True)
    if a.run:
        return subprocess.call([arg.replace("{dir}", a.dir) for arg in a.run])
    return 0


if __name__ == "__main__":
    sys.exit(main())
