"""The built-in battery: the texts a census reads when the user gives none.

Two parts. Random sequences written twice ("lamp river coat … lamp river coat …"), made from the
model's own vocabulary with a seed: on the second copy a previous-token head looks one back, a
duplicate-token head looks at the first copy of the same token, an induction head at the token that
followed it. They are TransformerLens's test for induction heads, with words instead of arbitrary
token ids so that the text can be opened in the window and reads back to the same tokens. And
sentences written for this project: ordinary English with commas and full stops (for Clark et al.'s
averages), repeated words and names (for duplicate and induction heads) and pronouns that refer back.
"""

from __future__ import annotations

import hashlib
from collections.abc import Iterator

import numpy as np

from .texts import CensusText, TextSource

REPEATS = 20      # random sequences
PERIOD = 24       # tokens in one copy of a sequence
BATTERY_VERSION = 1  # part of the cache's key: a change to the texts below must not reuse old results

SENTENCES = (
    "The cat sat on the mat, and then the cat fell asleep.",
    "My sister lives in Lyon, but she works in Geneva.",
    "The animal didn't cross the street because it was too tired.",
    "When Mary and John went to the store, John gave a drink to Mary.",
    "The keys to the cabinet are on the table.",
    "Paris is the capital of France, and Rome is the capital of Italy.",
    "He opened the window, looked outside, and closed it again.",
    "The quick brown fox jumps over the lazy dog.",
    "After the storm, the river rose, the bridge closed, and the town waited.",
    "A robot reads books while the children sleep.",
    "The teacher asked the students to read the first chapter twice.",
    "Alice gave Bob a book, and Bob gave Alice a pen.",
    "The trophy didn't fit into the suitcase because it was too big.",
    "Water boils at one hundred degrees, and ice melts at zero.",
    "She said that the meeting, which had started late, would end early.",
    "The old man the boats.",
    "Every morning the baker bakes bread, and every evening he sells it.",
    "If it rains tomorrow, we will stay at home and play cards.",
    "The doctor told the nurse that she would be late.",
    "One, two, three, four, five, six, seven, eight.",
    "The committee approved the plan, though several members disagreed.",
    "Tom read the letter, folded the letter, and put the letter away.",
    "The children who live next door play football in the park.",
    "Light travels faster than sound, which is why we see lightning first.",
    "The company hired three engineers, two designers and a manager.",
    "I think, therefore I am.",
    "The painting that hangs in the hall was made by my grandmother.",
    "Birds fly south in winter, and they come back in spring.",
    "The train to Berlin leaves at nine, and the train to Vienna leaves at ten.",
    "Although the test was hard, most of the students passed it.",
    "The phone rang, but nobody answered it.",
    "Sarah met Sarah's friend at the station near Sarah's office.",
)


def repeated_sequences(subject, seed: int, count: int = REPEATS, period: int = PERIOD) -> list[CensusText]:
    """`count` texts of `period` different random words of `subject`'s vocabulary, each one token,
    written twice; the same texts for the same seed and model. A vocabulary with fewer such words (a
    toy or tiny model) gives sequences as long as it has words; one with fewer than two, none."""
    words = subject.candidate_words
    one_token: dict[str, bool] = {}

    def draw(rng: np.random.Generator, period: int) -> list[str]:
        chosen = []
        for index in rng.permutation(len(words)):
            word = words[index]
            if word not in one_token:
                one_token[word] = subject.is_one_token(word)
            if one_token[word]:
                chosen.append(word)
                if len(chosen) == period:
                    break
        return chosen

    # a first draw finds out whether there are enough words (a failed one has tried every word)
    period = min(period, len(draw(np.random.default_rng(seed), period)))
    if period < 2:
        return []
    rng = np.random.default_rng(seed)
    sequences = [draw(rng, period) for _ in range(count)]
    return [CensusText(" " + " ".join(chosen + chosen), "repeat", period) for chosen in sequences]


def builtin_battery(subject, seed: int = 0, period: int = PERIOD) -> TextSource:
    """The battery for `subject`: the repeated sequences first, then the sentences."""
    repeats = repeated_sequences(subject, seed, period=period)
    items = repeats + [CensusText(s, "sentence") for s in SENTENCES]

    def texts() -> Iterator[CensusText]:
        return iter(items)

    defined_by = "\n".join([f"battery {BATTERY_VERSION}", *(t.text for t in items)])
    return TextSource(f"built-in battery: {len(repeats)} random sequences written twice (seed {seed}) and "
                      f"{len(SENTENCES)} sentences", len(items), hashlib.sha256(defined_by.encode()).hexdigest(),
                      texts)
