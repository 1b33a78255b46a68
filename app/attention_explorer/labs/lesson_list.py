"""The lessons in teaching order: key, title and the class that draws it.

The main window builds its Lessons menu from this list at start without importing a single lesson;
the panels load when the Lessons window first opens.
"""

from __future__ import annotations

import importlib
from dataclasses import dataclass


@dataclass(frozen=True)
class Lesson:
    key: str
    title: str
    module: str      # beside this file
    class_name: str

    def panel_class(self) -> type:
        return getattr(importlib.import_module(f".{self.module}", __package__), self.class_name)


LESSON_LIST: tuple[Lesson, ...] = (
    Lesson("scaling", "Why √dₖ", "scaling_lesson", "QtScalingLesson"),
    Lesson("masking", "Masking", "masking_lesson", "QtMaskingLesson"),
    Lesson("heads", "Multi-head", "heads_lesson", "QtHeadsLesson"),
    Lesson("word_order", "Word order", "word_order_lesson", "QtWordOrderLesson"),
    Lesson("two_matrices", "Why two matrices", "two_matrices_lesson", "QtTwoMatricesLesson"),
    Lesson("cross", "Cross-attention", "cross_lesson", "QtCrossLesson"),
    Lesson("additive", "Additive attention", "additive_lesson", "QtAdditiveLesson"),
    Lesson("cost", "Cost", "cost_lesson", "QtCostLesson"),
    Lesson("compare", "Compare", "compare_lesson", "QtCompareLesson"),
)
LESSONS: tuple[tuple[str, str], ...] = tuple((lesson.key, lesson.title) for lesson in LESSON_LIST)
