"""What the service writes before it serves: the seed file's organizations, keys
and agents (seed), and the preset vault templates every organization sees (presets)."""
