"""RoBERTa: BERT (bert.py) with its positions counted from the padding token's id.

    position of token t = padding_idx + (how many non-padding tokens up to and including t), and
    padding_idx for a padding token itself (transformers' create_position_ids_from_input_ids)

With padding_idx = 1 (`pad_token_id`), a text's tokens sit at positions 2, 3, …, so a table of
`max_position_embeddings` rows (514) reads 512 tokens. It has one segment row (`type_vocab_size` 1),
and its tokenizer is byte-level BPE with <s> … </s> around the text.
Architecture: BERT's, with position_pad = padding_idx.
Tensors: BERT's names, after an optional `roberta.` prefix.
"""

from __future__ import annotations

from dataclasses import replace

from ...errors import ModelError
from ..fields import Fields
from ..progress import Progress
from ..weights import Architecture, ModelWeights, TensorSource
from . import bert
from .shared import Family


def architecture(fields: Fields) -> Architecture:
    pad = fields.count("pad_token_id", default=1, minimum=0)
    rows = fields.count("max_position_embeddings")
    if rows <= pad + 1:
        raise ModelError(f"config.json: 'max_position_embeddings' is {rows}, which leaves no position for a token "
                         f"after the padding id {pad}; it must be more than {pad + 1}")
    # the tokens it reads: the rows past the padding id's own and the ones before it
    return replace(bert.architecture(fields, "roberta", position_pad=pad), max_positions=rows - pad - 1)


def weights(arch: Architecture, src: TensorSource, progress: Progress | None) -> ModelWeights:
    return bert.weights(arch, src, progress, position_rows=arch.max_positions + arch.position_pad + 1)


FAMILY = Family(
    name="roberta", title="RoBERTa", decoder=False,
    architectures=("RobertaModel", "RobertaForMaskedLM", "RobertaForSequenceClassification",
                   "RobertaForTokenClassification", "RobertaForQuestionAnswering"),
    prefixes=("roberta.",), layer_pattern=bert.FAMILY.layer_pattern, architecture=architecture, weights=weights,
    plain={"position_embedding_type": "absolute"},
)
