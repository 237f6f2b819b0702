# bench_probe: a full probe of the p5.48xlarge fixture next to lspci.
#   cmake --build B --target bench_probe_run
# builds the fixture into B/fixtures/agent and prints both timings, their
# ratio and the agent's peak RSS. Not part of ctest: no timed assertions.
add_executable(bench_probe ${CMAKE_CURRENT_LIST_DIR}/bench_probe.c)
target_link_libraries(bench_probe PRIVATE dt_agent)
set_target_properties(bench_probe PROPERTIES RUNTIME_OUTPUT_DIRECTORY ${PROJECT_BINARY_DIR}/bench)

add_custom_target(bench_probe_run
  COMMAND bash ${PROJECT_SOURCE_DIR}/tests/fixtures/agent/mksysfs.sh
          ${PROJECT_BINARY_DIR}/fixtures/agent p5.48xlarge
  COMMAND bench_probe $<TARGET_FILE:dratopo-agent> ${PROJECT_BINARY_DIR}/fixtures/agent/p5.48xlarge 100
  DEPENDS bench_probe dratopo-agent
  USES_TERMINAL
  COMMENT "bench: dratopo-agent probe vs lspci -vmm -nn on the p5.48xlarge fixture")
