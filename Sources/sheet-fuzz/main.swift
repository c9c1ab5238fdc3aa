// Placeholder while the fuzz target is written.
print("sheet-fuzz")
