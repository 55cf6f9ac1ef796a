"""The code editor: snippet editing, find and go-to-line, and completion from a helper process."""
