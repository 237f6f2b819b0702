# Suites of the structured allocator (common/alloc/) and the end-to-end
# test of `dratopo allocate`.
dt_add_suite(test_alloc SOURCES ${CMAKE_CURRENT_LIST_DIR}/unit/test_alloc.c LIBS dt_alloc)
dt_add_suite(test_alloc_cel SOURCES ${CMAKE_CURRENT_LIST_DIR}/unit/test_alloc_cel.c LIBS dt_alloc)
dt_add_script_test(e2e_allocate ${CMAKE_CURRENT_LIST_DIR}/e2e/allocate.sh)
