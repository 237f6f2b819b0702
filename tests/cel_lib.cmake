# The Kubernetes CEL libraries (common/cel/cel_lib_*.c) and `dratopo cel eval`.
dt_add_suite(test_cel_lib SOURCES ${CMAKE_CURRENT_LIST_DIR}/unit/test_cel_lib.c LIBS dt_cel
             INTERNAL common/cel)
dt_add_script_test(e2e_cel_eval ${CMAKE_CURRENT_LIST_DIR}/e2e/cel_eval.sh)
