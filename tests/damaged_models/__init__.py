"""Damaged copies of the tiny test checkpoints (tests/engine/pretrained/data/), made on the fly.

`all_cases()` lists every kind: damage to the files as bytes and kinds of file (files.py), to what
config.json and tokenizer.json say (fields.py) and to the GGUF header (gguf.py), and files swollen
with values that are small in the file but large in memory (fields.swollen_files,
gguf.swollen_headers; also used at full size by the memory test and bench). Nothing here is
committed data: each case writes its copy when it runs (see copies.py).
"""

from __future__ import annotations

from .copies import Case
from .fields import config_cases, swollen_cases, tokenizer_cases
from .files import byte_cases, header_cases, not_a_file_cases
from .gguf import metadata_cases, structure_cases


def all_cases() -> list[Case]:
    cases = [*byte_cases(), *not_a_file_cases(), *header_cases(), *config_cases(), *tokenizer_cases(),
             *metadata_cases(), *structure_cases(),
             *swollen_cases()]
    kinds = [case.kind for case in cases]
    duplicated = {kind for kind in kinds if kinds.count(kind) > 1}
    assert not duplicated, f"two cases of one kind: {sorted(duplicated)[:5]}"
    return cases
