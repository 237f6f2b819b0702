# Suites of the base module (errors, diagnostics, string buffers, hashes).
dt_add_suite(test_base SOURCES ${CMAKE_CURRENT_LIST_DIR}/unit/test_base.c LIBS dt_base)

