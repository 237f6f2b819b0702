dt_add_suite(test_opts SOURCES ${CMAKE_CURRENT_LIST_DIR}/unit/test_opts.c LIBS dt_opts)
dt_add_script_test(e2e_grammar ${CMAKE_CURRENT_LIST_DIR}/e2e/grammar.sh)
