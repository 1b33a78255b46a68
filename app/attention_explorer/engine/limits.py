"""The sizes the app accepts, in one place, so the engine, the window, the command line and the
README all say the same numbers. Each keeps every action responsive on an ordinary laptop.
"""

# Model files: a toy model is read by people, and a 10,000-feature model made every toggle of the
# window take seconds. At these sizes a full recompute of a short sentence stays a few milliseconds.
MAX_FEATURES = 512
MAX_PROJECTION_COLUMNS = 512
MAX_WORDS = 10_000
MAX_FILE_BYTES = 16 * 1024 * 1024   # a model at the limits above, written with short numbers, fits
# Model files need four levels (the object, "vocabulary", a word, its numbers); extra keys may nest
# more, but nothing real nests 64 deep, and Python's parser overflows its stack near 1,000.
MAX_JSON_DEPTH = 64

# Sentences for toy models: the n × n matrices of 1,024 words are a million cells each, already far
# more than a screen shows. Tokenising 1 MB of text takes most of a second, so a sentence is refused
# by its length in characters before it is split into words.
MAX_SENTENCE_WORDS = 1024
MAX_SENTENCE_CHARS = 32_000
