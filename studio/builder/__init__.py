"""The builder: the form that declares one resource (fields, details, icons, live data), validated inline."""
