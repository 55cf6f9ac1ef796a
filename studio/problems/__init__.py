"""The Problems panel: lint findings of the open project, with quick fixes."""
