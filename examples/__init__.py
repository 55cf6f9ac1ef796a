"""Example project files, installed as the data package `resource_studio_examples`."""
