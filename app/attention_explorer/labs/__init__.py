"""The lesson panels: each answers one "why?" about attention with a live experiment.

Every panel reads the shared controller (model, sentence, options, trace) and calls the engine's
lesson functions; none does attention maths itself. The lessons window hosts them as tabs.
"""
