# bench_coord: reports/s into dratopo-coordinator against an empty handler on
# the same gRPC glue, and a 10,000-node fleet's RSS (not a test).
add_executable(bench_coord ${CMAKE_CURRENT_LIST_DIR}/bench_coord.c ${CMAKE_CURRENT_LIST_DIR}/bench_spawn.c)
target_link_libraries(bench_coord PRIVATE dt_agent_run dt_rpc dt_proto Threads::Threads)
set_target_properties(bench_coord PROPERTIES RUNTIME_OUTPUT_DIRECTORY ${PROJECT_BINARY_DIR}/bench)
# bench_ha: the fleet in the cluster at 10,000 nodes: the API server's write
# rate while the fleet first reports, in steady state and after a takeover
# (two coordinators with --leader-elect, a real kube-apiserver; not a test).
if(TARGET dt_agent AND TARGET dt_rpc)
  add_executable(bench_ha ${CMAKE_CURRENT_LIST_DIR}/bench_ha.c ${CMAKE_CURRENT_LIST_DIR}/bench_spawn.c)
  target_include_directories(bench_ha PRIVATE ${CMAKE_CURRENT_LIST_DIR})
  target_compile_definitions(bench_ha PRIVATE DT_SOURCE_DIR="${PROJECT_SOURCE_DIR}")
  target_link_libraries(bench_ha PRIVATE dt_agent_run dt_rpc dt_proto Threads::Threads)
  set_target_properties(bench_ha PROPERTIES RUNTIME_OUTPUT_DIRECTORY ${PROJECT_BINARY_DIR}/bench)
endif()
