"""Builds the quality stages the pipeline runs, from `QualityConfig`."""

from __future__ import annotations

from thresher.core.stages import Stage
from thresher.quality.config import QualityConfig


def build_quality_stages(config: QualityConfig) -> list[Stage]:
    """The per-document quality stages, in order (transforms before rule sets)."""
    return []
