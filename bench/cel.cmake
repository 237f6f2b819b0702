# bench_cel: DRA selector throughput (seed selector with semver/quantity, and
# the plain shape); bench/bench_cel.sh runs it next to @bufbuild/cel.
add_executable(bench_cel ${CMAKE_CURRENT_LIST_DIR}/bench_cel.c)
target_link_libraries(bench_cel PRIVATE dt_cel)
set_target_properties(bench_cel PROPERTIES RUNTIME_OUTPUT_DIRECTORY ${PROJECT_BINARY_DIR}/bench)
