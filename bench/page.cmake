# bench_page: the coordinator's status pages over 10,000 simulated nodes,
# beside its /metrics and the ListNodes RPC in the same run.
#   cmake --build B --target bench_page_run
# Not part of ctest: no timed assertions; numbers go to docs/page.md.
add_executable(bench_page ${CMAKE_CURRENT_LIST_DIR}/bench_page.c ${CMAKE_CURRENT_LIST_DIR}/bench_spawn.c)
target_link_libraries(bench_page PRIVATE dt_agent_run dt_rpc dt_proto Threads::Threads)
set_target_properties(bench_page PROPERTIES RUNTIME_OUTPUT_DIRECTORY ${PROJECT_BINARY_DIR}/bench)

add_custom_target(bench_page_run
  COMMAND bash ${PROJECT_SOURCE_DIR}/tests/fixtures/agent/mksysfs.sh ${PROJECT_BINARY_DIR}/fixtures/agent
  COMMAND bench_page ${PROJECT_BINARY_DIR}
  DEPENDS bench_page dratopo-coordinator
  USES_TERMINAL
  COMMENT "bench: the status pages over 10,000 nodes, beside /metrics and ListNodes")
