"""Text the tool handles: outside text made safe for prompts (sanitize) and reports (mdsafe),
the citation syntax the renderer and the lint share, and passage selection."""
