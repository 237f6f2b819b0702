# bench_alloc: the structured allocator on kube-scheduler's DRA performance
# shape (bench/bench_alloc.c). Not a test: run `build/bench/bench_alloc`
# and read the pods/s next to the published anchors.
add_executable(bench_alloc ${CMAKE_CURRENT_LIST_DIR}/bench_alloc.c)
target_link_libraries(bench_alloc PRIVATE dt_alloc)
set_target_properties(bench_alloc PROPERTIES RUNTIME_OUTPUT_DIRECTORY ${PROJECT_BINARY_DIR}/bench)
