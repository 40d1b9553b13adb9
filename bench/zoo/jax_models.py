"""JAX models for the real-model benchmark: flax.linen networks and a jax.numpy solver.

Each builder returns ``(function, arguments, description)``; ``export`` lowers
``jax.jit(function, keep_unused=True).lower(*arguments)`` to StableHLO text, weights
passed as arguments (their pytree leaves, in jax's order), as ../shared/models does.
Every random draw is seeded.
"""

from __future__ import annotations

import math

import jax
import jax.numpy as jnp
from flax import linen as nn


class ResBlock(nn.Module):
    """A DDPM/Stable-Diffusion residual block: GroupNorm, SiLU, 3x3 conv, time embedding."""

    channels: int

    @nn.compact
    def __call__(self, x, temb):
        h = nn.Conv(self.channels, (3, 3))(nn.silu(nn.GroupNorm(32)(x)))
        h = h + nn.Dense(self.channels)(nn.silu(temb))[:, None, None, :]
        h = nn.Conv(self.channels, (3, 3))(nn.silu(nn.GroupNorm(32)(h)))
        if x.shape[-1] != self.channels:
            x = nn.Conv(self.channels, (1, 1))(x)
        return x + h


class AttentionBlock(nn.Module):
    """Self-attention over the pixels, after a GroupNorm, with a residual."""

    heads: int = 4

    @nn.compact
    def __call__(self, x):
        batch, height, width, channels = x.shape
        h = nn.GroupNorm(32)(x).reshape(batch, height * width, channels)
        h = nn.MultiHeadDotProductAttention(num_heads=self.heads)(h, h)
        return x + h.reshape(x.shape)


def timestep_embedding(t, dim: int):
    half = dim // 2
    freqs = jnp.exp(-math.log(10000.0) * jnp.arange(half, dtype=jnp.float32) / half)
    angles = t[:, None] * freqs[None, :]
    return jnp.concatenate([jnp.sin(angles), jnp.cos(angles)], axis=-1)


class UNetBlock(nn.Module):
    """One level of a diffusion U-Net: down (res, attention, res, stride-2 conv), a middle
    with attention at half resolution, up (nearest upsampling, skip concat, res)."""

    channels: int = 128

    @nn.compact
    def __call__(self, x, t):
        temb = nn.Dense(4 * self.channels)(timestep_embedding(t, self.channels))
        temb = nn.Dense(4 * self.channels)(nn.silu(temb))
        h = ResBlock(self.channels)(x, temb)
        h = AttentionBlock()(h)
        skip = ResBlock(self.channels)(h, temb)
        h = nn.Conv(self.channels, (3, 3), strides=(2, 2))(skip)
        h = ResBlock(2 * self.channels)(h, temb)
        h = AttentionBlock()(h)
        h = jnp.repeat(jnp.repeat(h, 2, axis=1), 2, axis=2)
        h = nn.Conv(self.channels, (3, 3))(h)
        h = ResBlock(self.channels)(jnp.concatenate([h, skip], axis=-1), temb)
        return nn.Conv(x.shape[-1], (3, 3))(nn.silu(nn.GroupNorm(32)(h)))


def unet_block():
    key_x, key_init = jax.random.split(jax.random.PRNGKey(10))
    x = jax.random.normal(key_x, (2, 32, 32, 128), jnp.float32)
    t = jnp.array([10.0, 500.0], jnp.float32)
    model = UNetBlock()
    params = model.init(key_init, x, t)
    return (model.apply, (params, x, t),
            "flax.linen diffusion U-Net level (DDPM-style), NHWC 2x32x32x128 + timesteps: "
            "GroupNorm, SiLU, 3x3 and stride-2 convolutions, pixel self-attention (1024 and 256 "
            "tokens, 4 heads), nearest upsampling, skip concatenation")


def lstm_scan():
    key_x, key_init = jax.random.split(jax.random.PRNGKey(11))
    x = jax.random.normal(key_x, (8, 64, 128), jnp.float32)

    class Encoder(nn.Module):
        @nn.compact
        def __call__(self, x):
            h = nn.RNN(nn.OptimizedLSTMCell(256))(x)
            h = nn.RNN(nn.OptimizedLSTMCell(256))(h)
            return nn.Dense(8)(h[:, -1])

    model = Encoder()
    params = model.init(key_init, x)
    return (model.apply, (params, x),
            "flax.linen 2-layer LSTM (nn.RNN + OptimizedLSTMCell, hidden 256) over 64 steps of "
            "batch 8 x 128 features, linear head: two lax.scan loops (stablehlo.while)")


GRAVITY, SPACING, STEP = 9.81, 1.0, 0.02


def _shallow_water_step(state, _):
    """Lax-Friedrichs step of the 2-D shallow-water equations on a periodic grid."""
    h, hu, hv = state

    def neighbours(q):
        return (jnp.roll(q, -1, 0), jnp.roll(q, 1, 0), jnp.roll(q, -1, 1), jnp.roll(q, 1, 1))

    u, v = hu / h, hv / h
    flux_x = (hu, hu * u + 0.5 * GRAVITY * h * h, hu * v)
    flux_y = (hv, hv * u, hv * v + 0.5 * GRAVITY * h * h)
    ratio = STEP / (2 * SPACING)
    new = []
    for q, fx, fy in zip((h, hu, hv), flux_x, flux_y):
        down, up, right, left = neighbours(q)
        fx_down, fx_up, _, _ = neighbours(fx)
        _, _, fy_right, fy_left = neighbours(fy)
        new.append(0.25 * (down + up + right + left)
                   - ratio * (fx_down - fx_up) - ratio * (fy_right - fy_left))
    h, hu, hv = new
    energy = 0.5 * jnp.sum((hu * hu + hv * hv) / h + GRAVITY * h * h)
    return (h, hu, hv), (jnp.sum(h), energy)


def shallow_water(state):
    final, (mass, energy) = jax.lax.scan(_shallow_water_step, state, None, length=200)
    return final, mass, energy


def shallow_water_inputs():
    n = 256
    coords = jnp.linspace(-1.0, 1.0, n)
    xx, yy = jnp.meshgrid(coords, coords, indexing="ij")
    noise = jax.random.normal(jax.random.PRNGKey(12), (3, n, n), jnp.float32)
    h = 1.0 + 0.2 * jnp.exp(-40.0 * ((xx - 0.3) ** 2 + yy ** 2)) + 0.001 * noise[0]
    return ((h.astype(jnp.float32), 0.01 * noise[1], 0.01 * noise[2]),)


def solver():
    return (shallow_water, shallow_water_inputs(),
            "jax.numpy 2-D shallow-water equations, Lax-Friedrichs on a periodic 256x256 grid, "
            "200 steps in lax.scan, mass and energy per step: a stencil of rolls in a loop")


MODELS = {"flax_unet_block": unet_block, "flax_lstm_scan": lstm_scan,
          "jax_shallow_water": solver}


def export(name: str):
    """(StableHLO text, inputs as numpy arrays in argument order, description, parameter count)."""
    import numpy as np

    function, arguments, description = MODELS[name]()
    text = jax.jit(function, keep_unused=True).lower(*arguments).as_text()
    leaves = [np.asarray(leaf) for leaf in jax.tree_util.tree_leaves(arguments)]
    count = sum(int(leaf.size) for leaf in jax.tree_util.tree_leaves(arguments[0])) \
        if len(arguments) > 1 else 0
    return text, leaves, description, count
