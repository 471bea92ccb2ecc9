"""Files: the stored-solution format, data fingerprints, JSON and validation."""
