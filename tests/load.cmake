# The short load run (bench/bench_load.sh: 200 agents over mTLS for 30 s
# against the real coordinator): no failed call, and every agent's last
# acknowledged report is the one the coordinator holds. RSS growth and
# latency are printed, not asserted (no timed assertions in tests): the
# 30 s deadline makes a failed call mean a stuck coordinator, not a slow
# machine (the sanitizer build on 2 busy cores takes seconds per handshake).
# bench/ is configured after tests/: test for what bench_load is built from.
if(TARGET dt_agent AND TARGET dt_store AND TARGET dratopo-coordinator)
  add_test(NAME load_short
           COMMAND sh ${PROJECT_SOURCE_DIR}/bench/bench_load.sh ${PROJECT_BINARY_DIR}
                   --agents 200 --duration 30 --deadline-ms 30000 --check --no-rss-check)
  set_tests_properties(load_short PROPERTIES TIMEOUT 180 ENVIRONMENT "GRPC_VERBOSITY=NONE")
endif()
