"""Text normalization."""
