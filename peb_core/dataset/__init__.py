"""The dataset release: generated tasks as a folder of parquet files and a dataset card that a
Hugging Face Hub dataset repository serves as it is (`peb dataset export`)."""

from ._card import LICENSE, dataset_card, size_category
from ._configs import (
    COLUMNS,
    JSON_COLUMN,
    KINDS,
    SPLIT,
    Column,
    Config,
    Kind,
    Release,
    config_name,
)
from ._export import CARD, export_dataset

__all__ = [
    "CARD",
    "COLUMNS",
    "JSON_COLUMN",
    "KINDS",
    "LICENSE",
    "SPLIT",
    "Column",
    "Config",
    "Kind",
    "Release",
    "config_name",
    "dataset_card",
    "export_dataset",
    "size_category",
]
