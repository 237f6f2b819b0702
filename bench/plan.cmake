# bench_plan: `dratopo plan` on a synthetic cluster (bench/bench_plan.c).
# Not a test: run `build/bench/bench_plan run` and read the table.
add_executable(bench_plan ${CMAKE_CURRENT_LIST_DIR}/bench_plan.c)
target_link_libraries(bench_plan PRIVATE dt_plan dt_hwdb dt_alloc dt_model dt_cel dt_doc
                      dt_units dt_base)
set_target_properties(bench_plan PROPERTIES RUNTIME_OUTPUT_DIRECTORY ${PROJECT_BINARY_DIR}/bench)
