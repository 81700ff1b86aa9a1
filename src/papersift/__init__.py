"""papersift: research-paper news without the noise."""

__version__ = "0.1.0"
