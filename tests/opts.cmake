dt_add_suite(test_opts SOURCES ${CMAKE_CURRENT_LIST_DIR}/unit/test_opts.c LIBS dt_opts)
