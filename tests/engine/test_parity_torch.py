"""The engine agrees with PyTorch's own attention layers to 1e-12 (float64)."""

import numpy as np
import pytest

from attention_explorer import engine
from attention_explorer.engine import Options

torch = pytest.importorskip("torch")


@pytest.mark.parametrize("causal", [False, True])
@pytest.mark.parametrize("seed", range(5))
def test_scaled_dot_product_matches_torch(causal, seed):
    rng = np.random.default_rng(seed)
    n, d_k = rng.integers(1, 12), rng.integers(1, 9)
    q, k, v = (rng.normal(size=(n, d_k)) for _ in range(3))
    mask = engine.causal_mask(n) if causal else None
    ours = engine.scaled_dot_product_attention(q, k, v, mask=mask)["output"]
    theirs = torch.nn.functional.scaled_dot_product_attention(
        *(torch.from_numpy(a)[None] for a in (q, k, v)), is_causal=causal)[0].numpy()
    np.testing.assert_allclose(ours, theirs, rtol=0, atol=1e-12)


@pytest.mark.parametrize("heads", [1, 2, 4])
@pytest.mark.parametrize("causal", [False, True])
@pytest.mark.parametrize("seed", range(3))
def test_multi_head_matches_torch(heads, causal, seed):
    rng = np.random.default_rng(100 + seed)
    n, d_model = int(rng.integers(2, 10)), 8
    x = rng.normal(size=(n, d_model))
    mha = torch.nn.MultiheadAttention(d_model, heads, bias=False, batch_first=True, dtype=torch.float64)
    with torch.no_grad():
        for p in mha.parameters():
            p.copy_(torch.from_numpy(rng.normal(size=tuple(p.shape))))
    w_in = mha.in_proj_weight.detach().numpy()      # (3·d_model, d_model), applied as x·Wᵀ
    w_q, w_k, w_v = (w_in[i * d_model:(i + 1) * d_model].T for i in range(3))
    w_o = mha.out_proj.weight.detach().numpy().T
    _, _, ours = engine.multi_head_attention(x, w_q, w_k, w_v, w_o, Options(causal=causal, heads=heads))
    xt = torch.from_numpy(x)[None]
    mask = torch.from_numpy(engine.causal_mask(n)) if causal else None
    theirs, _ = mha(xt, xt, xt, attn_mask=mask, need_weights=False)
    np.testing.assert_allclose(ours, theirs[0].detach().numpy(), rtol=0, atol=1e-12)
