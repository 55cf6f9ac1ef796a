"""The open project as a document: undoable edits, snippet checks, files, autosave and recovery."""
