"""Selecting documents against a budget: `--target-tokens N --by COLUMN` (`budget.py`)."""
