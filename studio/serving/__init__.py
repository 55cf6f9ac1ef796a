"""Serving: the background server's control, its catalogue sync, and the server page's views."""
