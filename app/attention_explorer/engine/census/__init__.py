"""The head census: what every head of a model does, measured over many texts. Pure NumPy, no Qt.

One module per measure, each with its definition and its source: previous_token, duplicate_token
and induction (TransformerLens's detection patterns, scored by detection.mul_score), sink (Gu et al.
2024), clark (Clark et al. 2019's six averages) and entropy (their smoothed row entropy); and
norm_attention, Kobayashi et al. 2020's weight × moved-vector norm, a reading of one layer.

    subject = subject_for(model)                     # a PretrainedModel, or a ToyModel (+ options)
    source = builtin_battery(subject, seed=0)        # or read_texts_file("texts.txt", split="auto")
    result = run_census(subject, source, CensusSettings(), progress)   # streamed; progress may cancel
    result.grid("induction")          # (layers, heads) mean scores: the census grid, a model-view matrix
    result.ranked("induction", 5)     # [HeadScore(layer, head, score), …], strongest first
    result.best_example("induction", layer, head)   # (text, score) where the head fires most
    result.similar_heads(layer, head) # nearest heads by their profile over every measure
    effect = ablation_effect(subject, result, "induction", 3, source)  # decoders: loss with the top 3 off

    CensusCache(folder).load(key) / .store(key, result), key = cache_key(subject.fingerprint(),
                                                                         source.digest, settings)
    census_csv(result), census_json(result, ablation=effect.to_dict())

Layers and heads are 0-based here; the window and the CLI count from 1.
"""

from ..lazy_exports import lazy_exports

_HOME = {
    "ABLATION_TEXTS": "ablation", "AblationEffect": "ablation", "LossSplit": "ablation",
    "ablation_effect": "ablation",
    "BATTERY_VERSION": "battery", "SENTENCES": "battery", "builtin_battery": "battery",
    "repeated_sequences": "battery",
    "CensusCache": "cache", "app_data_folder": "cache", "cache_key": "cache", "default_cache_folder": "cache",
    "BY_KEY": "measures", "GROUPS": "measures", "MEASURES": "measures", "MEASURE_KEYS": "measures",
    "CensusSettings": "measures", "Measure": "measures", "keys_of": "measures",
    "FORMULA": "norm_attention", "FORMULA_SUMMED": "norm_attention", "NormAttention": "norm_attention",
    "norm_attention": "norm_attention", "pretrained_norm_attention": "norm_attention",
    "pretrained_moved_lengths": "norm_attention",
    "trace_norm_attention": "norm_attention", "with_norm_attention": "norm_attention",
    "census_csv": "report", "census_json": "report", "summary_lines": "report",
    "CensusResult": "result", "HeadScore": "result",
    "CachedCensus": "runner", "cached_census": "runner", "run_census": "runner",
    "RealSubject": "subjects", "ToySubject": "subjects", "subject_for": "subjects",
    "CensusText": "texts", "SPLITS": "texts", "TextSource": "texts", "read_texts_file": "texts",
}

__all__ = sorted(_HOME)

__getattr__, __dir__ = lazy_exports(__name__, globals(), _HOME)
