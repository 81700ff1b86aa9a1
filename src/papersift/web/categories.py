"""Readable names of the categories papers carry, from every source (sources.categories)."""

from __future__ import annotations

from papersift.sources.categories import category_field, category_label, is_category

__all__ = ["category_field", "category_label", "is_category"]
