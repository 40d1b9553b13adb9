"""The GPU-sized benchmark programs (bench/export_gpu_sized.py): sizes that fill an H200.

Each builder takes a ``Scale`` (1 = the real size; the tests export the same programs at
1/256) and returns a ``Case``: the function, its arguments (jax.ShapeDtypeStruct, or real
arrays where their spread matters: a model's initialised weights), how the harness draws
each argument on the GPU machine, and which peak bounds the program (bench/gpu/roofline.py).
Weights are arguments, never constants, so the exported text stays small (kB, not GB).
"""

from __future__ import annotations

from collections.abc import Callable
from dataclasses import dataclass

import jax
import jax.numpy as jnp
import numpy as np


@dataclass(frozen=True)
class Scale:
    """A factor on every size: ``dim(8192)`` is 8192 at scale 1 and 32 at scale 1/256."""

    factor: float = 1.0

    def dim(self, full: int, least: int = 1) -> int:
        return max(int(round(full * self.factor)), least)


@dataclass
class Case:
    function: Callable
    arguments: tuple             # pytree: ShapeDtypeStruct leaves, or arrays to take the spread of
    peak: str                    # a key of bench/gpu/roofline.PEAKS
    description: str
    flops: float | None = None   # analytic FLOPs; None: jax's cost analysis of the lowered program
    ints: dict | None = None     # argument index -> (low, high): an integer array drawn in [low, high)


def _normal(shape, dtype=jnp.float32):
    return jax.ShapeDtypeStruct(tuple(shape), dtype)


# ---- memory-bound: 256 MiB (f32 8192 x 8192) or more read, counted against HBM bandwidth

def _square(scale: Scale):
    n = scale.dim(8192, 8)
    return n, _normal((n, n))


def gelu(scale):
    n, x = _square(scale)
    return Case(jax.nn.gelu, (x,), "hbm", f"jax.nn.gelu (tanh form), f32[{n},{n}]")


def bias_add(scale):
    n, x = _square(scale)
    return Case(lambda a, b: a + b, (x, _normal((n,))), "hbm",
                f"f32[{n},{n}] + f32[{n}] broadcast along the rows")


def transpose(scale):
    n, x = _square(scale)
    return Case(lambda a: a.T, (x,), "hbm", f"f32[{n},{n}] transposed")


def row_sum(scale):
    n, x = _square(scale)
    return Case(lambda a: jnp.sum(a, axis=1), (x,), "hbm", f"f32[{n},{n}] summed along rows -> [{n}]")


def column_sum(scale):
    n, x = _square(scale)
    return Case(lambda a: jnp.sum(a, axis=0), (x,), "hbm",
                f"f32[{n},{n}] summed down columns -> [{n}]")


def softmax(scale):
    n, x = _square(scale)
    return Case(lambda a: jax.nn.softmax(a, axis=-1), (x,), "hbm", f"jax.nn.softmax over rows of f32[{n},{n}]")


def layernorm(scale):
    rows, width = scale.dim(65536, 8), scale.dim(1024, 8)

    def norm(x, gamma, beta):
        mean = jnp.mean(x, axis=-1, keepdims=True)
        var = jnp.mean(jnp.square(x - mean), axis=-1, keepdims=True)
        return (x - mean) * jax.lax.rsqrt(var + 1e-5) * gamma + beta

    return Case(norm, (_normal((rows, width)), _normal((width,)), _normal((width,))), "hbm",
                f"layer norm of f32[{rows},{width}] with scale and shift")


# ---- compute-bound: FLOPs against the tensor-core peak of the element type

_DTYPES = {"f32": (jnp.float32, "tf32"), "bf16": (jnp.bfloat16, "bf16"), "f16": (jnp.float16, "f16")}


def matmul(size: int, kind: str):
    dtype, peak = _DTYPES[kind]

    def build(scale):
        n = scale.dim(size, 8)
        return Case(jnp.matmul, (_normal((n, n), dtype), _normal((n, n), dtype)), peak,
                    f"{kind}[{n},{n}] @ {kind}[{n},{n}]", flops=2.0 * n ** 3)
    return build


def attention(seq: int, batch: int):
    """Multi-head attention as a model writes it (no fused kernel asked for): bf16 matmuls,
    the softmax in f32."""
    def build(scale):
        s, b, h, d = scale.dim(seq, 8), scale.dim(batch, 1), scale.dim(16, 2), scale.dim(128, 8)

        def attend(q, k, v):
            scores = jnp.einsum("bhqd,bhkd->bhqk", q, k).astype(jnp.float32) / np.sqrt(d)
            weights = jax.nn.softmax(scores, axis=-1).astype(jnp.bfloat16)
            return jnp.einsum("bhqk,bhkd->bhqd", weights, v)

        qkv = _normal((b, h, s, d), jnp.bfloat16)
        return Case(attend, (qkv, qkv, qkv), "bf16",
                    f"attention, bf16, batch {b} x {h} heads x seq {s} x head dim {d}",
                    flops=4.0 * b * h * s * s * d)
    return build


# ---- real models (transformers' Flax models, random weights of the real configs)

def _token_ids(scale, batch: int, seq: int, vocab: int):
    shape = (scale.dim(batch, 2), scale.dim(seq, 8))
    return _normal(shape, jnp.int32), vocab


def bert_base(scale):
    from transformers import BertConfig, FlaxBertModel
    heads, head = scale.dim(12, 2), scale.dim(64, 8)
    config = BertConfig(vocab_size=scale.dim(30522, 64), hidden_size=heads * head,
                        num_hidden_layers=scale.dim(12), num_attention_heads=heads,
                        intermediate_size=4 * heads * head)
    model = FlaxBertModel(config, seed=0)
    ids, vocab = _token_ids(scale, 32, 512, config.vocab_size)

    def forward(params, input_ids, mask):
        out = model(input_ids, attention_mask=mask, params=params)
        return out.last_hidden_state, out.pooler_output

    return Case(forward, (model.params, ids, ids), "tf32",
                f"transformers FlaxBertModel, BERT-base config ({config.num_hidden_layers} layers, "
                f"hidden {config.hidden_size}), f32, batch {ids.shape[0]} x seq {ids.shape[1]}",
                ints={1: (0, vocab), 2: (1, 2)})


def gpt2_small(scale):
    from transformers import FlaxGPT2Model, GPT2Config
    heads, head = scale.dim(12, 2), scale.dim(64, 8)
    config = GPT2Config(vocab_size=scale.dim(50257, 64), n_embd=heads * head, n_layer=scale.dim(12),
                        n_head=heads, n_positions=scale.dim(1024, 8))
    model = FlaxGPT2Model(config, seed=0)
    ids, vocab = _token_ids(scale, 32, 1024, config.vocab_size)

    def forward(params, input_ids):
        return model(input_ids, params=params).last_hidden_state

    return Case(forward, (model.params, ids), "tf32",
                f"transformers FlaxGPT2Model, GPT-2 small config ({config.n_layer} layers, n_embd "
                f"{config.n_embd}), f32, batch {ids.shape[0]} x seq {ids.shape[1]} (no LM head)",
                ints={1: (0, vocab)})


def _images(scale, batch: int):
    side = scale.dim(224, 32)
    return _normal((scale.dim(batch, 2), 3, side, side))


def vit_b16(scale):
    from transformers import FlaxViTForImageClassification, ViTConfig
    heads, head = scale.dim(12, 2), scale.dim(64, 8)
    images = _images(scale, 128)
    config = ViTConfig(hidden_size=heads * head, num_hidden_layers=scale.dim(12),
                       num_attention_heads=heads, intermediate_size=4 * heads * head,
                       image_size=images.shape[-1], patch_size=16, num_labels=1000)
    model = FlaxViTForImageClassification(config, seed=0)

    def forward(params, pixels):
        return model(pixels, params=params).logits

    return Case(forward, (model.params, images), "tf32",
                f"transformers FlaxViTForImageClassification, ViT-B/16 config ({config.num_hidden_layers} "
                f"layers, hidden {config.hidden_size}), f32, {images.shape[0]} images "
                f"{images.shape[-1]}x{images.shape[-1]}")


def _resnet_config(scale, depths, hidden, layer_type):
    from transformers import ResNetConfig
    return ResNetConfig(embedding_size=scale.dim(64, 8), layer_type=layer_type,
                        depths=[scale.dim(d) for d in depths],
                        hidden_sizes=[scale.dim(h, 8) for h in hidden], num_labels=1000)


def resnet50(scale):
    from transformers import FlaxResNetForImageClassification
    config = _resnet_config(scale, [3, 4, 6, 3], [256, 512, 1024, 2048], "bottleneck")
    model = FlaxResNetForImageClassification(config, seed=0)
    images = _images(scale, 128)

    def forward(params, pixels):
        return model(pixels, params=params).logits

    return Case(forward, (model.params, images), "tf32",
                f"transformers FlaxResNetForImageClassification, ResNet-50 config (depths "
                f"{config.depths}), f32, inference, {images.shape[0]} images "
                f"{images.shape[-1]}x{images.shape[-1]}")


def resnet18_train_step(scale):
    """One training step: softmax cross-entropy through ResNet-18 in training mode (batch
    statistics), its gradient, an optax adam update."""
    import optax
    from transformers import FlaxResNetForImageClassification
    config = _resnet_config(scale, [2, 2, 2, 2], [64, 128, 256, 512], "basic")
    model = FlaxResNetForImageClassification(config, seed=0)
    optimizer = optax.adam(1e-3)
    images = _images(scale, 128)
    labels = _normal((images.shape[0],), jnp.int32)

    def loss(params, batch_stats, pixels, classes):
        out, state = model(pixels, params={"params": params, "batch_stats": batch_stats}, train=True)
        logp = jax.nn.log_softmax(out.logits)
        return -jnp.mean(jnp.take_along_axis(logp, classes[:, None], axis=1)), state["batch_stats"]

    def step(params, batch_stats, opt_state, pixels, classes):
        (value, stats), grads = jax.value_and_grad(loss, has_aux=True)(params, batch_stats, pixels, classes)
        updates, opt_state = optimizer.update(grads, opt_state, params)
        return optax.apply_updates(params, updates), stats, opt_state, value

    params, stats = model.params["params"], model.params["batch_stats"]
    opt_state = optimizer.init(params)
    arguments = (params, stats, opt_state, images, labels)
    return Case(step, arguments, "tf32",
                f"training step: transformers FlaxResNetForImageClassification, ResNet-18 config, "
                f"batch norm in training mode, softmax cross-entropy, value_and_grad, optax adam; "
                f"f32, {images.shape[0]} images {images.shape[-1]}x{images.shape[-1]}",
                ints={4: (0, 1000)})


CASES = {
    "gelu": gelu, "bias_add": bias_add, "transpose": transpose, "row_sum": row_sum,
    "column_sum": column_sum, "softmax": softmax, "layernorm": layernorm,
    **{f"matmul_{kind}_{n}": matmul(n, kind) for n in (4096, 8192) for kind in ("f32", "bf16", "f16")},
    "attention_bf16_s2048": attention(2048, 8), "attention_bf16_s8192": attention(8192, 1),
    "bert_base": bert_base, "gpt2_small": gpt2_small, "vit_b16": vit_b16, "resnet50": resnet50,
    "resnet18_train_step": resnet18_train_step,
}
MODELS = ("bert_base", "gpt2_small", "vit_b16", "resnet50", "resnet18_train_step")
