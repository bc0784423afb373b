"""Protocol-level fake simulator servers: they speak the real wire protocols, so the unmodified
client libraries talk to them as they would to a simulator."""
