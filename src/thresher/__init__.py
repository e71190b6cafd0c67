"""thresher: turn a web crawl into an ML-ready text corpus."""

__version__ = "0.1.0"
