"""The studio's persistent preferences (layout, theme, recent files, server defaults): what every feature may read."""
