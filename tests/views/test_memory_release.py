"""Memory handed back to the system after a real model is closed or a long text replaced: a moment
later, after a full cycle collection, once however many are closed in that moment (malloc_trim, where
glibc has it). A long walk once ended 550 MB above its start on a toy model because the release ran
before the closed model's last cycles were collected."""

from pathlib import Path
from types import SimpleNamespace

import pytest

from attention_explorer import controller_pretrained
from attention_explorer.controller import LONG_TEXT_TOKENS, Controller

pytest.importorskip("tokenizers")

TINY_BERT = Path(__file__).parents[1] / "engine" / "pretrained" / "data" / "tiny-bert"


@pytest.fixture
def releases(monkeypatch, qtbot):
    # an earlier test's controller may still have its release pending: let it go off first, or it would
    # be counted here
    qtbot.wait(controller_pretrained.RELEASE_AFTER_MS + 100)
    calls = []
    monkeypatch.setattr(controller_pretrained, "release_free_memory", lambda: calls.append("trim"))
    # the release's own collection, not the gc module's: pyqtgraph's collector timer (gc_policy) also
    # calls gc.collect, whenever earlier tests' garbage passes its thresholds
    monkeypatch.setattr(controller_pretrained, "gc", SimpleNamespace(collect=lambda: calls.append("collect") or 0))
    return calls


def test_closing_a_real_model_collects_then_releases_once_a_moment_later(qtbot, releases):
    controller = Controller()
    controller.open_model(str(TINY_BERT), "the cat sat on the mat")
    assert controller.is_real
    controller.open_model("cats-chase-mice")
    controller.open_model("cat-sat-on-mat")
    assert releases == []  # not while the views still redraw
    qtbot.waitUntil(lambda: releases == ["collect", "trim"], timeout=5000)
    qtbot.wait(controller_pretrained.RELEASE_AFTER_MS + 200)
    assert releases == ["collect", "trim"]  # once for both changes


def test_a_long_text_replaced_is_released_and_a_short_one_is_not(qtbot, releases):
    controller = Controller()
    words = sorted(controller.model.vocabulary)
    controller.set_sentence(" ".join(words[i % len(words)] for i in range(LONG_TEXT_TOKENS + 10)))
    assert controller.trace.n == LONG_TEXT_TOKENS + 10
    controller.set_sentence("the cat sat")
    qtbot.waitUntil(lambda: releases == ["collect", "trim"], timeout=5000)
    releases.clear()
    controller.set_sentence("the cat sat on")
    qtbot.wait(controller_pretrained.RELEASE_AFTER_MS + 200)
    assert releases == []


def test_a_long_text_s_forward_hands_free_memory_back_before_and_after_it(qtbot, releases, monkeypatch):
    """What glibc kept free from the views' last matrices and from the forward's temporaries was under
    the new forward's layer inputs and the views' new matrices, and the window's peak was their sum
    (SmolLM2, 2,048 tokens). A short text's forward hands nothing back."""
    controller = Controller()
    controller.open_model(str(TINY_BERT), "the cat sat on the mat")
    controller.toggle_ablated(0, 0)
    assert releases == []
    monkeypatch.setattr(controller_pretrained, "OWN_PAGES_FROM_TOKENS", 1)  # this text stands for a long one
    controller.toggle_ablated(0, 0)
    assert releases == ["trim", "trim"]  # before it ran and once it was in, before the views redrew
