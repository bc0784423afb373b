"""Scene generators, one module per scene family."""
