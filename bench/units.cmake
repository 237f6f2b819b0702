# bench_units: quantity and semver throughput (an executable, not a test).
add_executable(bench_units ${CMAKE_CURRENT_LIST_DIR}/bench_units.c)
target_link_libraries(bench_units PRIVATE dt_units)
