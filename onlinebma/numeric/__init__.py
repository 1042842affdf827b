"""Reading numeric features (placeholder docstring, written last)."""
