# fuzz_rpc: the coordinator's handlers fed fuzzed requests in-process
# (tests/fuzz/fuzz_rpc.c). fuzz_rpc_replay, built always, replays the seed
# corpus (and every regression input kept there) under ctest without
# libFuzzer; fuzz_rpc itself needs -DDRATOPO_FUZZ=ON and clang.
if(TARGET dt_coord)
  set(DT_RPC_CORPUS ${CMAKE_CURRENT_LIST_DIR}/fuzz/rpc_corpus)

  add_executable(fuzz_rpc_replay ${CMAKE_CURRENT_LIST_DIR}/fuzz/fuzz_rpc.c)
  target_link_libraries(fuzz_rpc_replay PRIVATE dt_coord)
  set_target_properties(fuzz_rpc_replay PROPERTIES RUNTIME_OUTPUT_DIRECTORY ${PROJECT_BINARY_DIR}/tests)
  add_test(NAME fuzz_rpc_replay COMMAND fuzz_rpc_replay ${DT_RPC_CORPUS})
  set_tests_properties(fuzz_rpc_replay PROPERTIES TIMEOUT 120)
  # A seed picks its methods by their index in coord_methods: a method added
  # in the middle silently turns a seed into other calls. The checked-in
  # seeds must be what --seeds writes today.
  add_test(NAME fuzz_rpc_seeds
           COMMAND sh -c "d=$(mktemp -d) && $1 --seeds $d && for f in $d/*; do cmp $f $2/$(basename $f) || exit 1; done; rc=$?; rm -rf $d; exit $rc"
                   sh $<TARGET_FILE:fuzz_rpc_replay> ${DT_RPC_CORPUS})

  if(DRATOPO_FUZZ)
    add_executable(fuzz_rpc ${CMAKE_CURRENT_LIST_DIR}/fuzz/fuzz_rpc.c)
    target_compile_definitions(fuzz_rpc PRIVATE DT_FUZZ_LIBFUZZER)
    target_compile_options(fuzz_rpc PRIVATE -fsanitize=fuzzer,address,undefined)
    target_link_options(fuzz_rpc PRIVATE -fsanitize=fuzzer,address,undefined)
    target_link_libraries(fuzz_rpc PRIVATE dt_coord)
    set_target_properties(fuzz_rpc PROPERTIES RUNTIME_OUTPUT_DIRECTORY ${PROJECT_BINARY_DIR}/tests)
    # Coverage where the handling happens: the handlers and what they call.
    foreach(lib dt_coord dt_reconcile dt_topo dt_plan dt_store)
      target_compile_options(${lib} PRIVATE -fsanitize=fuzzer-no-link,address,undefined)
    endforeach()
  endif()
endif()
