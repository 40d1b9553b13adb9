"""bench/jax_surface_speed.py's size knob: grown arguments keep what the
programs rely on (shapes that agree, unit dims, ranges, sortedness, dtypes)."""

from __future__ import annotations

import sys

import numpy as np

from conftest import REPO

sys.path.insert(0, str(REPO / "bench"))

from jax_surface_speed import first_factor, grown  # noqa: E402


def test_grown_arguments_keep_unit_dims_ranges_and_sortedness():
    rng = np.random.default_rng(0)
    x = rng.standard_normal((4, 1, 6)).astype(np.float32)
    index = np.array([0, 3, 7, 2, 5], np.int32)
    grid = np.sort(rng.standard_normal(12)).astype(np.float32)
    key = np.uint32(7)
    big_x, big_index, big_grid, big_key = grown([x, index, grid, key], 3, rng)
    assert big_x.shape == (12, 1, 18) and big_x.dtype == np.float32
    assert set(np.unique(big_x)) <= set(np.unique(x))
    assert big_index.shape == (15,) and big_index.min() >= 0 and big_index.max() <= 7
    assert (np.diff(big_grid) >= 0).all() and big_key == key


def test_grown_square_matrices_stay_well_posed():
    rng = np.random.default_rng(1)
    a = rng.standard_normal((6, 6)).astype(np.float32)
    big = grown([a], 4, rng)[0]
    assert big.shape == (24, 24)
    assert np.linalg.cond(big.astype(np.float64)) < 100        # a heavy diagonal


def test_first_factor_reaches_the_target_size():
    assert first_factor([np.zeros((4, 33), np.float32)], 2**20) == 45     # (180, 1485): 1 MB
    assert first_factor([np.zeros(20, np.float32)], 2**20) == 4096         # capped
    assert first_factor([np.zeros((1000, 1000), np.float32)], 2**20) == 1  # big already
    assert first_factor([np.float32(1)], 2**20) == 1
