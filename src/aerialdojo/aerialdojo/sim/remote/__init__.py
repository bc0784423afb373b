"""Helpers shared by the backends that drive a simulator server: connection, frames, images."""
