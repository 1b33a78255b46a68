"""A head's scores made block by block (blocks.score_rows): a decoder's masked scores are −∞ after each
query, and what they keep is, to the bit, the unmasked scores ÷ the divisor that the step table shows
beside them, though they multiply out only the keys up to each block's last query and the unmasked
ones every key."""

import numpy as np
import pytest

pytest.importorskip("tokenizers")
from attention_explorer.engine.pretrained import open_pretrained  # noqa: E402
from attention_explorer.engine.pretrained.blocks import head_scores, row_blocks  # noqa: E402
from attention_explorer.engine.pretrained.ops import soft_cap  # noqa: E402

from .conftest import DATA  # noqa: E402

N = 700  # several blocks of rows (row_blocks), some keys past every block but the last


@pytest.fixture(scope="module")
def decoder():
    arch = open_pretrained(DATA / "tiny-llama").arch
    rng = np.random.default_rng(3)
    q = rng.standard_normal((arch.n_heads, N, arch.d_head), dtype=np.float32)
    k_t = np.ascontiguousarray(rng.standard_normal((arch.n_kv_heads, arch.d_head, N), dtype=np.float32))
    return arch, q, k_t


def test_masked_scores_keep_the_unmasked_ones_to_the_bit_and_are_minus_infinity_after_the_query(decoder):
    arch, q, k_t = decoder
    assert arch.is_decoder and len(row_blocks(N)) > 2
    for head in (0, arch.n_heads - 1):  # the last query head reads another key/value head
        raw = head_scores(arch, q, k_t, head)
        masked = head_scores(arch, q, k_t, head, divisor=8.0, masked=True)
        later = np.triu(np.ones((N, N), dtype=bool), k=1)
        assert np.isneginf(masked[later]).all()
        np.testing.assert_array_equal(masked[~later], (raw / np.float32(8.0))[~later])


def test_a_cap_bends_the_kept_scores_and_leaves_the_masked_ones_minus_infinity(decoder):
    """(The cap applies before the mask: a masked −∞ through tanh would be −cap, a weight of its own.)"""
    arch, q, k_t = decoder
    raw = head_scores(arch, q, k_t, 1)
    capped = head_scores(arch, q, k_t, 1, divisor=2.0, masked=True, cap=3.0)
    later = np.triu(np.ones((N, N), dtype=bool), k=1)
    assert np.isneginf(capped[later]).all()
    np.testing.assert_array_equal(capped[~later], soft_cap(raw / np.float32(2.0), 3.0)[~later])
