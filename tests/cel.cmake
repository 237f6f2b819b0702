# CEL: unit suites and the cel-spec conformance runner.
dt_add_suite(test_cel SOURCES ${CMAKE_CURRENT_LIST_DIR}/unit/test_cel.c LIBS dt_cel)

add_executable(cel_conformance ${CMAKE_CURRENT_LIST_DIR}/cel/conformance.c)
target_link_libraries(cel_conformance PRIVATE dt_cel PkgConfig::JSONC)
set_target_properties(cel_conformance PROPERTIES RUNTIME_OUTPUT_DIRECTORY ${PROJECT_BINARY_DIR}/tests)
add_test(NAME cel_conformance
         COMMAND sh ${CMAKE_CURRENT_LIST_DIR}/cel/run_conformance.sh
                 $<TARGET_FILE:cel_conformance> ${PROJECT_BINARY_DIR}/tests/cel-cases.json
         WORKING_DIRECTORY ${PROJECT_SOURCE_DIR})
set_tests_properties(cel_conformance PROPERTIES TIMEOUT 300)

if(DRATOPO_FUZZ)
  add_executable(fuzz_cel ${CMAKE_CURRENT_LIST_DIR}/fuzz/fuzz_cel.c)
  target_compile_options(fuzz_cel PRIVATE -fsanitize=fuzzer,address,undefined)
  target_link_options(fuzz_cel PRIVATE -fsanitize=fuzzer,address,undefined)
  target_link_libraries(fuzz_cel PRIVATE dt_cel)
endif()
