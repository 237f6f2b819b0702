# bench_load: N simulated agents (one process, many channels) against a
# real dratopo-coordinator; bench_load.sh makes the certificates and runs
# it. The short run is a test (tests/load.cmake); the full one is not.
if(TARGET dt_agent AND TARGET dt_rpc AND TARGET dt_store)
  add_executable(bench_load ${CMAKE_CURRENT_LIST_DIR}/bench_load.c
                 ${CMAKE_CURRENT_LIST_DIR}/load_faults.c ${CMAKE_CURRENT_LIST_DIR}/bench_spawn.c)
  target_include_directories(bench_load PRIVATE ${CMAKE_CURRENT_LIST_DIR})
  target_link_libraries(bench_load PRIVATE dt_agent_run dt_rpc dt_store dt_hwdb Threads::Threads)
  set_target_properties(bench_load PROPERTIES RUNTIME_OUTPUT_DIRECTORY ${PROJECT_BINARY_DIR}/bench)
endif()
