# bench_store: durable puts per second into the store (not a test).
if(TARGET dt_store)
  add_executable(bench_store ${CMAKE_CURRENT_LIST_DIR}/bench_store.c)
  target_link_libraries(bench_store PRIVATE dt_store)
  set_target_properties(bench_store PROPERTIES RUNTIME_OUTPUT_DIRECTORY ${PROJECT_BINARY_DIR}/bench)
endif()
