"""The engines this worker ships."""

from __future__ import annotations

from engine_worker.engine import ThinkEngine
from engine_worker.engines.arthur import Arthur
from engine_worker.engines.eddie import Eddie
from engine_worker.engines.ford import Ford
from engine_worker.engines.slartibartfast import Slartibartfast


def default_engines() -> list[ThinkEngine]:
    return [Arthur(), Ford(), Slartibartfast(), Eddie()]
