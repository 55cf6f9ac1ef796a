"""The studio's SVG icons, installed as the data package `resource_studio_icons`."""
