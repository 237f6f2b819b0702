# bench_doc: YAML/JSON read and print throughput (an executable, not a test).
add_executable(bench_doc ${CMAKE_CURRENT_LIST_DIR}/bench_doc.c)
target_link_libraries(bench_doc PRIVATE dt_doc)
