"""Reading and writing files safely: bounded reads that refuse FIFOs and devices, atomic writes,
confinement to the project root, .gitignore matching, source discovery and decoding, Python's own
line numbering, and control characters escaped wherever a user's string is printed. The floor of
the lint layer: it imports nothing else of tensorcost."""
