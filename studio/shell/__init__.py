"""The shell: the main window that connects the features, its commands, the editor page, and preferences."""
