"""Matplotlib drawings of result objects. Each function returns the Figure."""
