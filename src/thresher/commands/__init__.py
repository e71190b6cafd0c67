"""CLI verbs, one module each, registered by thresher.cli."""
