"""AGOS air-ground cooperation (seed 001): towns, road graphs, tools, protocol and experts."""
