"""PyTorch models for the real-model benchmark, exported by torch-mlir's FX importer.

Each builder returns ``(module, example_inputs, description)``: a ``torch.nn.Module`` in
eval mode with seeded random weights, and the data inputs of one call. ``export`` makes the
weights arguments of @main (as the JAX exports in ../shared/models pass them) by calling the
module through ``torch.func.functional_call``, then lowers it with
``torch_mlir.fx.export_and_import(..., output_type="stablehlo")``.

MobileNetV2 follows torchvision's ``mobilenet_v2`` layer for layer (torchvision itself does
not import beside the CPU build of torch this machine has).
"""

from __future__ import annotations

import torch
from torch import nn


def _conv_bn(cin: int, cout: int, kernel: int = 3, stride: int = 1, groups: int = 1,
             relu: bool = True) -> nn.Sequential:
    layers = [nn.Conv2d(cin, cout, kernel, stride, (kernel - 1) // 2, groups=groups, bias=False),
              nn.BatchNorm2d(cout)]
    if relu:
        layers.append(nn.ReLU6(inplace=False))
    return nn.Sequential(*layers)


class InvertedResidual(nn.Module):
    def __init__(self, cin: int, cout: int, stride: int, expand: int):
        super().__init__()
        hidden = cin * expand
        self.residual = stride == 1 and cin == cout
        layers = [] if expand == 1 else [_conv_bn(cin, hidden, 1)]
        layers += [_conv_bn(hidden, hidden, 3, stride, groups=hidden),
                   _conv_bn(hidden, cout, 1, relu=False)]
        self.conv = nn.Sequential(*layers)

    def forward(self, x):
        return x + self.conv(x) if self.residual else self.conv(x)


class MobileNetV2(nn.Module):
    """torchvision.models.mobilenet_v2(width_mult=1.0): 3.5 M parameters, NCHW."""

    SETTINGS = ((1, 16, 1, 1), (6, 24, 2, 2), (6, 32, 3, 2), (6, 64, 4, 2),
                (6, 96, 3, 1), (6, 160, 3, 2), (6, 320, 1, 1))   # expand, channels, n, stride

    def __init__(self, classes: int = 1000):
        super().__init__()
        layers, cin = [_conv_bn(3, 32, stride=2)], 32
        for expand, cout, count, stride in self.SETTINGS:
            for index in range(count):
                layers.append(InvertedResidual(cin, cout, stride if index == 0 else 1, expand))
                cin = cout
        layers.append(_conv_bn(cin, 1280, 1))
        self.features = nn.Sequential(*layers)
        self.classifier = nn.Sequential(nn.Dropout(0.2), nn.Linear(1280, classes))
        for module in self.modules():   # torchvision's initialisation
            if isinstance(module, nn.Conv2d):
                nn.init.kaiming_normal_(module.weight, mode="fan_out")
            elif isinstance(module, nn.BatchNorm2d):
                nn.init.uniform_(module.weight, 0.5, 1.5)      # trained-looking statistics
                nn.init.normal_(module.bias, 0.0, 0.1)
                module.running_mean.normal_(0.0, 0.1)
                module.running_var.uniform_(0.5, 1.5)
            elif isinstance(module, nn.Linear):
                nn.init.normal_(module.weight, 0, 0.01)
                nn.init.zeros_(module.bias)

    def forward(self, x):
        x = self.features(x)
        x = nn.functional.adaptive_avg_pool2d(x, (1, 1)).flatten(1)
        return self.classifier(x)


class LSTMClassifier(nn.Module):
    """Embedding -> 2-layer torch.nn.LSTM -> linear head on the last step (a text classifier)."""

    def __init__(self, vocab: int = 5000, embed: int = 128, hidden: int = 256, classes: int = 8):
        super().__init__()
        self.embed = nn.Embedding(vocab, embed)
        self.lstm = nn.LSTM(embed, hidden, num_layers=2, batch_first=True)
        self.head = nn.Linear(hidden, classes)

    def forward(self, tokens):
        states, _ = self.lstm(self.embed(tokens))
        return self.head(states[:, -1])


class TransformerEncoder(nn.Module):
    """torch.nn.TransformerEncoder (pre-norm, GELU), 4 layers, d_model 256, 4 heads, padding mask."""

    def __init__(self, d_model: int = 256, heads: int = 4, layers: int = 4, ffn: int = 1024):
        super().__init__()
        layer = nn.TransformerEncoderLayer(d_model, heads, ffn, dropout=0.0, activation="gelu",
                                           batch_first=True, norm_first=True)
        self.encoder = nn.TransformerEncoder(layer, layers, enable_nested_tensor=False)

    def forward(self, x, padding):
        return self.encoder(x, src_key_padding_mask=padding)


def mobilenet_v2():
    torch.manual_seed(0)
    return (MobileNetV2().eval(), [torch.randn(2, 3, 224, 224)],
            "torchvision-style MobileNetV2 (3.5 M parameters), inference, NCHW 2x3x224x224: "
            "depthwise and 1x1 convolutions, batch norm, ReLU6")


def lstm():
    torch.manual_seed(1)
    tokens = torch.randint(0, 5000, (8, 16))
    return (LSTMClassifier().eval(), [tokens],
            "embedding + 2-layer torch.nn.LSTM (hidden 256) + linear head, batch 8 x 16 tokens; "
            "torch.export unrolls the 2 x 16 cell steps")


def transformer():
    torch.manual_seed(2)
    x = torch.randn(4, 128, 256)
    padding = torch.zeros(4, 128, dtype=torch.bool)
    padding[1, 100:] = padding[3, 64:] = True
    return (TransformerEncoder().eval(), [x, padding],
            "torch.nn.TransformerEncoder, 4 pre-norm layers, d_model 256, 4 heads, GELU, "
            "batch 4 x seq 128 with a key padding mask")


MODELS = {"torch_mobilenet_v2": mobilenet_v2, "torch_lstm": lstm,
          "torch_transformer": transformer}


class _Functional(nn.Module):
    """The module with its parameters and buffers as leading arguments."""

    def __init__(self, module: nn.Module, names: list[str]):
        super().__init__()
        self.module, self.names = module, names

    def forward(self, *args):
        state = dict(zip(self.names, args[:len(self.names)]))
        return torch.func.functional_call(self.module, state, tuple(args[len(self.names):]))


def export(name: str):
    """(StableHLO text, inputs as numpy arrays in argument order, description, parameter count)."""
    # torch-mlir here is PyTorch's frontend (its FX importer), as jax is for the flax
    # models, not the MLIR bindings xlac compiles with (test_registry.py exempts this file)
    from torch_mlir import fx

    module, data, description = MODELS[name]()
    state = {k: v.detach() for k, v in module.state_dict().items()
             if not k.endswith("num_batches_tracked")}
    weights = list(state.values())
    with torch.no_grad():
        lowered = fx.export_and_import(_Functional(module, list(state)), *weights, *data,
                                       output_type="stablehlo", func_name="main")
    arrays = [t.numpy() for t in weights + data]
    count = sum(int(t.numel()) for t in weights)
    return str(lowered), arrays, description, count
