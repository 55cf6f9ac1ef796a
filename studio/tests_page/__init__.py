"""The Tests page: every declared resource test and sample, run off the GUI thread."""
