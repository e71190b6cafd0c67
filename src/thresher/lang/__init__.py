"""Writing-system and language identification."""
