"""The catalogue: the project's direct resources and templates as two filterable lists."""
