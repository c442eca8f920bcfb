"""The case: a golden dataset's schema, its files, and the expectation language its fields speak."""
