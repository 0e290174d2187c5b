"""Tooling for the arm64 MTE / KASAN HW_TAGS / refcount_t patch series."""
