"""Cross-attention heads that align the target with its source: where a target token reads the source's
copies of a token, the one it holds or the one the decoder writes next.

An encoder–decoder's decoder reads the target shifted one place right (its start token first), so the
row of target token t_(i−1) is where the decoder writes t_i. Two detection patterns, each a 0/1 matrix
over (target rows, source columns) scored with TransformerLens's "mul" score (detection.mul_score):

- own token: P[i, j] = 1 when source token j is the token row i holds (the same id);
- next token: P[i, j] = 1 when source token j is the token row i writes next (the same id).

Only ordinary tokens count (a special on either side is in no pair): every text starts and ends with
the same specials, which would make any head reading <s> score. BART is trained to write its source
back (a denoising autoencoder), so the census reads each text as both source and target; a head that
copies then reads, from each target token, the source token it writes next: the shifted diagonal. A
text whose target shares no ordinary token with its source has empty patterns and is left out of
these measures' means, as a text without a repeat is of the duplicate-token measure.
"""

from __future__ import annotations

import numpy as np

from .detection import Pattern


def same_token_pattern(row_ids: np.ndarray, row_special: np.ndarray, key_ids: np.ndarray,
                       key_special: np.ndarray) -> Pattern:
    """The pairs (i, j) where key token j has row i's id, both ordinary tokens."""
    row_ids, key_ids = np.asarray(row_ids), np.asarray(key_ids)
    same = (row_ids[:, None] == key_ids[None, :]) & ~np.asarray(row_special, bool)[:, None] \
        & ~np.asarray(key_special, bool)[None, :]
    rows, cols = np.nonzero(same)
    return Pattern(rows.astype(np.intp), cols.astype(np.intp))
