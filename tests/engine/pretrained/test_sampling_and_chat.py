"""Choosing the next token (greedy, temperature, top-k, top-p, a seed) and a prompt put into a model's
chat template: hand-worked cases, and transformers' own warpers and templates where installed."""

import math

import numpy as np
import pytest

from attention_explorer.engine.errors import ModelError, OptionsError
from attention_explorer.engine.pretrained.chat import render_chat
from attention_explorer.engine.pretrained.sampling import Sampling, choose, drawing_distribution, generator

LOGITS = np.log(np.array([0.5, 0.3, 0.2]))  # softmax gives back 0.5, 0.3, 0.2
CHATML = ("{% for message in messages %}{{'<|im_start|>' + message['role'] + '\\n' + message['content'] + "
          "'<|im_end|>' + '\\n'}}{% endfor %}{% if add_generation_prompt %}{{ '<|im_start|>assistant\\n' }}{% endif %}")


def test_greedy_takes_the_likeliest_and_keeps_the_candidates():
    choice = choose(LOGITS, Sampling(), generator(Sampling()))
    assert choice.token_id == 0
    assert [c.token_id for c in choice.candidates] == [0, 1, 2]
    assert [c.probability for c in choice.candidates] == pytest.approx([0.5, 0.3, 0.2])
    # greedy draws from the model's own distribution
    assert [c.drawn_from for c in choice.candidates] == [c.probability for c in choice.candidates]


def test_a_temperature_of_one_half_squares_the_odds():
    drawn = drawing_distribution(LOGITS, Sampling(temperature=0.5))
    squares = np.array([0.25, 0.09, 0.04])
    np.testing.assert_allclose(drawn, squares / squares.sum())


@pytest.mark.parametrize(("sampling", "expected"), [
    (Sampling(temperature=1, top_k=2), [0.625, 0.375, 0.0]),
    (Sampling(temperature=1, top_p=0.6), [0.625, 0.375, 0.0]),      # 0.5 < 0.6: the second is needed
    (Sampling(temperature=1, top_p=0.5), [1.0, 0.0, 0.0]),          # 0.5 reaches 0.5 on its own
    (Sampling(temperature=1, top_k=1, top_p=0.9), [1.0, 0.0, 0.0]),
])
def test_top_k_and_top_p_keep_the_likeliest_and_share_out_again(sampling, expected):
    np.testing.assert_allclose(drawing_distribution(LOGITS, sampling), expected)


def test_a_seed_draws_the_same_again_and_another_seed_may_not():
    logits = np.zeros(50)
    draws = [[choose(logits, s, rng).token_id for _ in range(20)]
             for s in (Sampling(temperature=1, seed=3),) * 2 for rng in (generator(s),)]
    assert draws[0] == draws[1]
    other = Sampling(temperature=1, seed=4)
    rng = generator(other)
    assert [choose(logits, other, rng).token_id for _ in range(20)] != draws[0]


@pytest.mark.parametrize(("changes", "message"), [
    ({"temperature": -1}, "temperature"), ({"temperature": math.nan}, "temperature"), ({"top_k": -2}, "top-k"),
    ({"top_p": 0}, "top-p"), ({"top_p": 1.5}, "top-p"), ({"seed": -1}, "seed"),
])
def test_settings_out_of_range_are_refused_in_words(changes, message):
    with pytest.raises(OptionsError, match=message):
        Sampling(**changes)


def test_the_warpers_agree_with_transformers():
    torch = pytest.importorskip("torch")
    generation = pytest.importorskip("transformers.generation.logits_process")
    rng = np.random.default_rng(0)
    for temperature, top_k, top_p in ((0.7, 0, 1.0), (1.3, 40, 1.0), (0.9, 0, 0.8), (1.0, 12, 0.5)):
        logits = rng.normal(size=200) * 3
        scores = torch.tensor(logits[None], dtype=torch.float64)
        scores = generation.TemperatureLogitsWarper(temperature)(None, scores)
        if top_k:
            scores = generation.TopKLogitsWarper(top_k)(None, scores)
        if top_p < 1:
            scores = generation.TopPLogitsWarper(top_p)(None, scores)
        expected = torch.softmax(scores, dim=-1)[0].numpy()
        np.testing.assert_allclose(drawing_distribution(logits, Sampling(temperature, top_k, top_p)), expected,
                                   atol=1e-12)


def test_a_chatml_template_puts_the_prompt_in_the_user_turn():
    assert render_chat(CHATML, "Hi there") == "<|im_start|>user\nHi there<|im_end|>\n<|im_start|>assistant\n"


def test_a_template_that_fails_or_reaches_for_the_machine_says_so():
    with pytest.raises(ModelError, match="cannot be used: no system prompt"):
        render_chat("{{ raise_exception('no system prompt') }}", "hi")
    with pytest.raises(ModelError, match="cannot be used"):
        render_chat("{{ ''.__class__.__mro__[1].__subclasses__() }}", "hi")  # the sandbox refuses


def test_the_chat_is_transformers_own(data, tmp_path):
    """The same template through transformers' apply_chat_template, on a tokenizer of the tiny GPT-2."""
    transformers = pytest.importorskip("transformers")
    tokenizer = transformers.AutoTokenizer.from_pretrained(str(data / "tiny-gpt2"))
    templates = [CHATML, "{{ bos_token }}{% for m in messages %}{{ m['role'] | upper }}: {{ m['content'] | tojson }}"
                         "{% if not loop.last %}\n{% endif %}{% endfor %}{% if add_generation_prompt %}\nASSISTANT:"
                         "{% endif %}"]
    for template in templates:
        for prompt in ("Hi there", "Ünïcode « quotes » and \"escapes\"\n  spaced"):
            expected = tokenizer.apply_chat_template([{"role": "user", "content": prompt}], chat_template=template,
                                                     tokenize=False, add_generation_prompt=True)
            assert render_chat(template, prompt, bos_token=tokenizer.bos_token or "") == expected
