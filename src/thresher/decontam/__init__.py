"""Benchmark decontamination: an n-gram index of benchmark items, and the stages that drop or cut
documents sharing n-grams with them. See docs/decontamination.md."""

from thresher.decontam.config import DecontamConfig
from thresher.decontam.index import NgramIndex, build_index, load_index
from thresher.decontam.stage import DecontamCut, DecontamFilter

__all__ = ["DecontamConfig", "DecontamCut", "DecontamFilter", "NgramIndex", "build_index", "load_index"]
