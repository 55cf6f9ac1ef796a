"""The project settings page: every `[server]` key as a typed, undoable, validated field."""
