"""pytest entry point (placeholder until the plugin lands)."""
