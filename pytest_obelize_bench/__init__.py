"""pytest-obelize-bench: the obelize migration benchmark as a pytest plugin."""

__version__ = "0.1.0"
