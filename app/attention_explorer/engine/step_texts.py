"""What each step of the timeline computes and why, in plain words (one place for all the texts)."""

from __future__ import annotations

EXPLANATIONS = {
    "embed": "Each word becomes a row of numbers, one per feature: its embedding. Attention alone cannot "
             "tell word order apart, so with positions switched on a wave pattern unique to each place in "
             "the sentence is added.",
    "q": "A word's query says what it is looking for. Multiplying its features by W_Q turns "
         "\"I am a verb\" into \"I look for an animal\".",
    "kv": "A word's key says what it can be found by, its value what it hands over when found. W_K is "
          "a second matrix, not W_Q again, so that A looking for B need not mean B looking for A; W_V "
          "separates what a word passes on from how it is matched.",
    "scores": "Every query meets every key in a dot product: the larger q·k, the better the match. "
              "Rows are the words looking, columns the words looked at: n² numbers, which is why "
              "attention costs O(n²).",
    "scaled": "A dot product of d_k numbers grows like √d_k, and large scores make softmax give almost "
              "all weight to one word, where learning stalls. Dividing by √d_k keeps the scores' spread "
              "near 1 whatever d_k is.",
    "masked": "The causal mask forbids a word to look at the words after it, as a decoder that writes "
              "left to right must: those scores become −∞, so softmax gives them exactly zero weight.",
    "softmax": "Softmax turns each row of scores into weights that are positive and add up to 1: e to "
               "the score, divided by the row's sum. Larger scores win more than their share, yet "
               "every visible word keeps some weight, and the curve is smooth enough to learn.",
    "output": "Each word's output is an average of all the value rows, weighted by its row of weights: "
              "it takes a little from every word and most from the words it attends to.",
    "concat": "Several heads run the same steps on their own slices of the columns, so each can ask its "
              "own question (one looks for the subject, another for the object). Their outputs are "
              "set side by side.",
    "w_o": "W_O mixes the heads' outputs back into the model's features, so each word leaves the layer "
           "as one vector that combines what every head found.",
}

# The rule every cell of a step's result follows, shown until a cell is hovered (w = a word).
FORMULAS = {
    "embed": "x_w = e_w (positions are off)",
    "embed_positions": "x_w = e_w + pe_p, the encoding of the word's position p",
    "q": "q_w[j] = x_w · W_Q[:, j]",
    "kv": "k_w[j] = x_w · W_K[:, j],   v_w[j] = x_w · W_V[:, j]",
    "scores": "score(a → b) = q_a · k_b",
    "scaled": "scaled(a → b) = score(a → b) ÷ √d_k",
    "masked": "masked(a → b) = scaled(a → b) + 0, or + (−∞) when b comes after a",
    "softmax": "weight(a → b) = e^score(a → b) ÷ Σ_c e^score(a → c), summed over every word c",
    "output": "out_a[j] = Σ_b weight(a → b) × v_b[j], summed over every word b",
    "concat": "concat_a = out_a of head 1 | out_a of head 2 | …",
    "w_o": "y_a[f] = concat_a · W_O[:, f]",
}
