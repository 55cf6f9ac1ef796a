"""Code analysis off the GUI thread: the helper process (jedi completions, compile checks, pyflakes), its client."""
