"""Quality filtering."""
