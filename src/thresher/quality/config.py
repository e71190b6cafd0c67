"""Quality settings."""

from __future__ import annotations

from dataclasses import dataclass
from typing import Literal

from thresher.core.config import setting


@dataclass(frozen=True, slots=True, kw_only=True)
class QualityConfig:
    preset: Literal["default", "gopher", "c4", "fineweb", "all"] | None = setting(
        "default", "quality rule preset (none disables quality filtering)", flag="--quality"
    )
