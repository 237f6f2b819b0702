# bench_coord: reports/s into dratopo-coordinator against an empty handler on
# the same gRPC glue, and a 10,000-node fleet's RSS (not a test).
add_executable(bench_coord ${CMAKE_CURRENT_LIST_DIR}/bench_coord.c ${CMAKE_CURRENT_LIST_DIR}/bench_spawn.c)
target_link_libraries(bench_coord PRIVATE dt_agent dt_rpc dt_proto Threads::Threads)
set_target_properties(bench_coord PROPERTIES RUNTIME_OUTPUT_DIRECTORY ${PROJECT_BINARY_DIR}/bench)
