"""AGOS air-ground cooperation (AGOS-Bench): towns, road graphs, tools, protocol and experts."""
