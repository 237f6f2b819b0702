# Suites of the base module (errors, diagnostics, string buffers).
dt_add_suite(test_base SOURCES ${CMAKE_CURRENT_LIST_DIR}/unit/test_base.c LIBS dt_base)

# dt_add_script_test(NAME SCRIPT): an end-to-end shell test that drives the
# built binaries; it gets the build directory as $1.
function(dt_add_script_test name script)
  add_test(NAME ${name} COMMAND bash ${script} ${PROJECT_BINARY_DIR}
           WORKING_DIRECTORY ${PROJECT_SOURCE_DIR})
  set_tests_properties(${name} PROPERTIES TIMEOUT 300)
endfunction()
